package jwk

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"fmt"
	"math/big"
	"math/bits"
	"slices"
	"strings"

	"github.com/cloudflare/circl/sign/mldsa/mldsa87"
	"github.com/cloudflare/circl/sign/slhdsa"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
)

// CodeBadKey is the problem code of every fault in a key.
const CodeBadKey = "bad-key"

// The signing methods (JWK "alg") the format knows.
const (
	Ed25519   = "Ed25519"
	MLDSA87   = "ML-DSA-87"
	SLHDSA256 = "SLH-DSA-SHA2-256s"
	ES256     = "ES256"
	RS256     = "RS256"
)

// Sizes the format fixes for public keys and signatures.
const (
	MLDSA87PublicKeySize   = mldsa87.PublicKeySize // 2,592 bytes (FIPS 204, table 2)
	MLDSA87SignatureSize   = mldsa87.SignatureSize
	SLHDSA256PublicKey     = 64    // FIPS 205, table 2
	SLHDSA256SignatureSize = 29792 // FIPS 205, table 2
	MinRSABits             = 2048
	MaxRSABits             = 8192
)

// Where each method may be used.
var (
	// KeySetAlgs are the methods of an agent's or a service's key set, in order.
	KeySetAlgs = []string{Ed25519, MLDSA87}
	// SealAlgs are the methods of a recorder's key set, in order.
	SealAlgs = []string{Ed25519, MLDSA87, SLHDSA256}
	// PasskeyAlgs are the methods a person's passkey may use.
	PasskeyAlgs = []string{ES256, RS256, Ed25519}
)

// shapes gives, for each method, the exact members of its JWK, sorted.
var shapes = map[string][]string{
	Ed25519:   {"alg", "crv", "kty", "x"},
	MLDSA87:   {"alg", "kty", "pub"},
	SLHDSA256: {"alg", "kty", "pub"},
	ES256:     {"alg", "crv", "kty", "x", "y"},
	RS256:     {"alg", "e", "kty", "n"},
}

// Key is a public key that has passed CheckKey.
type Key struct {
	Alg        string         // "Ed25519", "ML-DSA-87", "ES256", "RS256", "SLH-DSA-SHA2-256s"
	JWK        map[string]any // the exact members, canonical value (every value a string)
	Thumbprint string         // RFC 7638 with SHA-256 (RFC 9964 members, with alg, for AKP keys)

	ed    ed25519.PublicKey
	ml    *mldsa87.PublicKey
	slh   *slhdsa.PublicKey
	ec    *ecdsa.PublicKey // nil when x, y is not a point of P-256: no signature checks
	rsa   *rsa.PublicKey
	bytes []byte // the raw public key: x, pub, or 0x04‖x‖y, or n
}

// CheckKey confirms that v is exactly one of the accepted key shapes, with
// its method among allowed, and returns the key. With no allowed method every
// key is refused. Every fault gives code "bad-key".
func CheckKey(v any, allowed ...string) (*Key, error) {
	return CheckKeyAt(v, "key", allowed...)
}

// CheckKeyAt is CheckKey with where (for example "by.keys[0]") at the head
// of the message.
func CheckKeyAt(v any, where string, allowed ...string) (*Key, error) {
	bad := func(format string, a ...any) error {
		return problem.New(CodeBadKey, "%s: %s", where, fmt.Sprintf(format, a...))
	}
	m, ok := v.(map[string]any)
	if !ok || m == nil {
		return nil, bad("a key must be an object")
	}
	alg, _ := m["alg"].(string)
	want, known := shapes[alg]
	if !known || !slices.Contains(allowed, alg) {
		return nil, bad("the signing method must be one of %s", strings.Join(allowed, ", "))
	}
	if len(m) != len(want) {
		return nil, bad("a %s key must hold exactly %s", alg, strings.Join(want, ", "))
	}
	for _, name := range want {
		if _, ok := m[name]; !ok {
			return nil, bad("a %s key must hold exactly %s", alg, strings.Join(want, ", "))
		}
	}
	text := make(map[string]string, len(want))
	for _, name := range want {
		s, ok := m[name].(string)
		if !ok {
			return nil, bad("%q must be text", name)
		}
		text[name] = s
	}
	decode := func(name string) ([]byte, error) {
		b, err := canon.UnB64(text[name])
		if err != nil {
			return nil, bad("%q is not base64url", name)
		}
		return b, nil
	}
	k := &Key{Alg: alg}
	var err error
	switch alg {
	case Ed25519:
		err = k.readEd25519(text, decode, bad)
	case MLDSA87:
		err = k.readMLDSA87(text, decode, bad)
	case SLHDSA256:
		err = k.readSLHDSA(text, decode, bad)
	case ES256:
		err = k.readES256(text, decode, bad)
	case RS256:
		err = k.readRS256(text, decode, bad)
	}
	if err != nil {
		return nil, err
	}
	k.JWK = make(map[string]any, len(text))
	for name, s := range text {
		k.JWK[name] = s
	}
	k.Thumbprint = thumbprint(k.JWK)
	return k, nil
}

// The readers below confirm the members of one key type (text holds them, each checked to be text;
// decode reads one as base64url; bad makes the "bad-key" error) and set the key's public half.

func (k *Key) readEd25519(text map[string]string, decode func(string) ([]byte, error), bad func(string, ...any) error) error {
	if text["kty"] != "OKP" || text["crv"] != "Ed25519" {
		return bad("an Ed25519 key has kty OKP and crv Ed25519")
	}
	x, err := decode("x")
	if err != nil {
		return err
	}
	if len(x) != ed25519.PublicKeySize {
		return bad("an Ed25519 public key is 32 bytes")
	}
	if WeakEd25519(x) {
		return bad("this Ed25519 public key is one under which anyone can sign, and is not accepted")
	}
	k.ed, k.bytes = ed25519.PublicKey(x), x
	return nil
}

func (k *Key) readMLDSA87(text map[string]string, decode func(string) ([]byte, error), bad func(string, ...any) error) error {
	if text["kty"] != "AKP" {
		return bad("an ML-DSA-87 key has kty AKP")
	}
	pub, err := decode("pub")
	if err != nil {
		return err
	}
	if len(pub) != MLDSA87PublicKeySize {
		return bad("an ML-DSA-87 public key is 2,592 bytes")
	}
	k.ml = new(mldsa87.PublicKey)
	if err := k.ml.UnmarshalBinary(pub); err != nil {
		return bad("an ML-DSA-87 public key is 2,592 bytes")
	}
	k.bytes = pub
	return nil
}

func (k *Key) readSLHDSA(text map[string]string, decode func(string) ([]byte, error), bad func(string, ...any) error) error {
	if text["kty"] != "AKP" {
		return bad("an SLH-DSA key has kty AKP")
	}
	pub, err := decode("pub")
	if err != nil {
		return err
	}
	if len(pub) != SLHDSA256PublicKey {
		return bad("an SLH-DSA-SHA2-256s public key is 64 bytes")
	}
	k.slh = &slhdsa.PublicKey{ID: slhdsa.SHA2_256s}
	if err := k.slh.UnmarshalBinary(pub); err != nil {
		return bad("an SLH-DSA-SHA2-256s public key is 64 bytes")
	}
	k.bytes = pub
	return nil
}

func (k *Key) readES256(text map[string]string, decode func(string) ([]byte, error), bad func(string, ...any) error) error {
	if text["kty"] != "EC" || text["crv"] != "P-256" {
		return bad("an ES256 key has kty EC and crv P-256")
	}
	x, err := decode("x")
	if err != nil {
		return err
	}
	y, err := decode("y")
	if err != nil {
		return err
	}
	if len(x) != 32 || len(y) != 32 {
		return bad("the two halves of a P-256 public key are 32 bytes each")
	}
	k.bytes = append(append([]byte{4}, x...), y...)
	// The reference accepts the shape without testing the point; a point
	// off the curve is a key under which no signature checks.
	if pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), k.bytes); err == nil {
		k.ec = pub
	}
	return nil
}

func (k *Key) readRS256(text map[string]string, decode func(string) ([]byte, error), bad func(string, ...any) error) error {
	if text["kty"] != "RSA" || text["e"] != "AQAB" {
		return bad("an RS256 key has kty RSA and e AQAB")
	}
	n, err := decode("n")
	if err != nil {
		return err
	}
	size := 0
	if len(n) > 0 && n[0] != 0 {
		size = (len(n)-1)*8 + bits.Len8(n[0])
	}
	if size < MinRSABits || size > MaxRSABits {
		return bad("an RS256 key is 2,048 to 8,192 bits")
	}
	k.rsa = &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: 65537}
	k.bytes = n
	return nil
}

// thumbprint is RFC 7638 with SHA-256: the required members, sorted, with
// no spaces. "alg" is among them only for the AKP key type (RFC 9964 §6).
// Every member is plain base64url or a fixed name, so canonical JSON writes
// them exactly as RFC 7638 does.
func thumbprint(jwk map[string]any) string {
	required := make(map[string]any, len(jwk))
	for name, v := range jwk {
		if name == "alg" && jwk["kty"] != "AKP" {
			continue
		}
		required[name] = v
	}
	return canon.Fingerprint(canon.MustMarshal(required))
}

// PublicBytes returns a copy of the raw public key: the 32 bytes of an
// Ed25519 key, the 2,592 bytes of an ML-DSA-87 key, the 64 bytes of an
// SLH-DSA key, 0x04‖x‖y for ES256, or the modulus of an RS256 key.
func (k *Key) PublicBytes() []byte { return slices.Clone(k.bytes) }

// NewEd25519Key returns the Key of an Ed25519 public key.
func NewEd25519Key(pub ed25519.PublicKey) (*Key, error) {
	return CheckKey(map[string]any{"alg": Ed25519, "crv": "Ed25519", "kty": "OKP", "x": canon.B64(pub)}, Ed25519)
}

// NewMLDSA87Key returns the Key of an ML-DSA-87 public key.
func NewMLDSA87Key(pub *mldsa87.PublicKey) (*Key, error) {
	return CheckKey(map[string]any{"alg": MLDSA87, "kty": "AKP", "pub": canon.B64(pub.Bytes())}, MLDSA87)
}

// NewSLHDSAKey returns the Key of an SLH-DSA-SHA2-256s public key (64 bytes).
func NewSLHDSAKey(pub []byte) (*Key, error) {
	return CheckKey(map[string]any{"alg": SLHDSA256, "kty": "AKP", "pub": canon.B64(pub)}, SLHDSA256)
}

// NewES256Key returns the Key of a P-256 public key.
func NewES256Key(pub *ecdsa.PublicKey) (*Key, error) {
	raw, err := pub.Bytes()
	if err != nil || len(raw) != 65 {
		return nil, problem.New(CodeBadKey, "key: not a P-256 public key")
	}
	return CheckKey(map[string]any{"alg": ES256, "crv": "P-256", "kty": "EC", "x": canon.B64(raw[1:33]), "y": canon.B64(raw[33:])}, ES256)
}
