package jwk

import (
	"fmt"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
)

// SealKeySet is a recorder's key set: exactly an Ed25519 key, an ML-DSA-87
// key, then an SLH-DSA-SHA2-256s key (format description §3.9). A seal
// counts as signed only if all three signatures check.
type SealKeySet struct{ Ed25519, MLDSA87, SLHDSA *Key }

// CheckSealKeySet confirms that v is a list of exactly three keys in the
// recorder's order. Every fault gives "bad-key".
func CheckSealKeySet(v any) (SealKeySet, error) { return CheckSealKeySetAt(v, "keys") }

// CheckSealKeySetAt is CheckSealKeySet with where at the head of the message.
func CheckSealKeySetAt(v any, where string) (SealKeySet, error) {
	list, ok := v.([]any)
	if !ok || len(list) != len(SealAlgs) {
		return SealKeySet{}, problem.New(CodeBadKey, "%s: a recorder's key set is exactly three keys: Ed25519, ML-DSA-87, then SLH-DSA-SHA2-256s", where)
	}
	var keys [3]*Key
	for i, alg := range SealAlgs {
		k, err := CheckKeyAt(list[i], fmt.Sprintf("%s[%d]", where, i), alg)
		if err != nil {
			return SealKeySet{}, err
		}
		keys[i] = k
	}
	return SealKeySet{Ed25519: keys[0], MLDSA87: keys[1], SLHDSA: keys[2]}, nil
}

// IsZero reports whether the set holds no keys.
func (s SealKeySet) IsZero() bool { return s.Ed25519 == nil && s.MLDSA87 == nil && s.SLHDSA == nil }

func (s SealKeySet) complete() bool { return s.Ed25519 != nil && s.MLDSA87 != nil && s.SLHDSA != nil }

// Value returns the key set as a canonical value: the list of the three
// JWKs. A set missing a key gives nil.
func (s SealKeySet) Value() []any {
	if !s.complete() {
		return nil
	}
	return []any{cloneJWK(s.Ed25519.JWK), cloneJWK(s.MLDSA87.JWK), cloneJWK(s.SLHDSA.JWK)}
}

// Fingerprint is the fingerprint a person checking names a recorder by
// (format description §21.1): SHA-256 of the canonical list of its keys,
// in base64url. A set missing a key gives "".
func (s SealKeySet) Fingerprint() string {
	v := s.Value()
	if v == nil {
		return ""
	}
	return KeyListFingerprint(v)
}

// Key returns the key of the set for a method.
func (s SealKeySet) Key(alg string) *Key {
	switch alg {
	case Ed25519:
		return s.Ed25519
	case MLDSA87:
		return s.MLDSA87
	case SLHDSA256:
		return s.SLHDSA
	}
	return nil
}

// Equal reports whether both sets hold the same three keys.
func (s SealKeySet) Equal(o SealKeySet) bool {
	if !s.complete() || !o.complete() {
		return false
	}
	return s.Ed25519.Thumbprint == o.Ed25519.Thumbprint && s.MLDSA87.Thumbprint == o.MLDSA87.Thumbprint && s.SLHDSA.Thumbprint == o.SLHDSA.Thumbprint
}

// KeyListFingerprint is the fingerprint of a list of keys, whatever it
// holds: SHA-256 of its canonical JSON, in base64url (the reference's
// keySetFingerprint, which the seal-key-sets vectors pin).
func KeyListFingerprint(keys []any) string { return canon.Fingerprint(canon.MustMarshal(keys)) }
