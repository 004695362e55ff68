package jwk

import (
	"fmt"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
)

// KeySet is the key set of an agent or a service: exactly an Ed25519 key,
// then an ML-DSA-87 key (format description §3.9). A record signed by a key
// set counts only if both signatures check.
type KeySet struct{ Ed25519, MLDSA87 *Key }

// CheckKeySet confirms that v is a list of exactly two keys, Ed25519 then
// ML-DSA-87. Every fault gives code "bad-key", as in the reference.
func CheckKeySet(v any) (KeySet, error) { return CheckKeySetAt(v, "keys") }

// CheckKeySetAt is CheckKeySet with where (for example "by.keys") at the
// head of the message.
func CheckKeySetAt(v any, where string) (KeySet, error) {
	list, ok := v.([]any)
	if !ok || len(list) != len(KeySetAlgs) {
		return KeySet{}, problem.New(CodeBadKey, "%s: a key set is exactly two keys: Ed25519, then ML-DSA-87", where)
	}
	ed, err := CheckKeyAt(list[0], fmt.Sprintf("%s[0]", where), Ed25519)
	if err != nil {
		return KeySet{}, err
	}
	ml, err := CheckKeyAt(list[1], fmt.Sprintf("%s[1]", where), MLDSA87)
	if err != nil {
		return KeySet{}, err
	}
	return KeySet{Ed25519: ed, MLDSA87: ml}, nil
}

// IsZero reports whether the set holds no keys.
func (s KeySet) IsZero() bool { return s.Ed25519 == nil && s.MLDSA87 == nil }

// Value returns the key set as a canonical value: the list of the two JWKs.
// A set missing a key gives nil.
func (s KeySet) Value() []any {
	if s.Ed25519 == nil || s.MLDSA87 == nil {
		return nil
	}
	return []any{cloneJWK(s.Ed25519.JWK), cloneJWK(s.MLDSA87.JWK)}
}

// Fingerprint returns the fingerprint of the key set: SHA-256 of the
// canonical JSON of its list of keys, in base64url. A set missing a key
// gives "".
func (s KeySet) Fingerprint() string {
	v := s.Value()
	if v == nil {
		return ""
	}
	return canon.Fingerprint(canon.MustMarshal(v))
}

// Equal reports whether both sets hold the same two keys. Sets missing a
// key are equal to nothing.
func (s KeySet) Equal(o KeySet) bool {
	if s.Ed25519 == nil || s.MLDSA87 == nil || o.Ed25519 == nil || o.MLDSA87 == nil {
		return false
	}
	return s.Ed25519.Thumbprint == o.Ed25519.Thumbprint && s.MLDSA87.Thumbprint == o.MLDSA87.Thumbprint
}

// Key returns the key of the set for a method ("Ed25519" or "ML-DSA-87").
func (s KeySet) Key(alg string) *Key {
	switch alg {
	case Ed25519:
		return s.Ed25519
	case MLDSA87:
		return s.MLDSA87
	}
	return nil
}

func cloneJWK(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
