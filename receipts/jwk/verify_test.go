package jwk

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"math/big"
	"testing"

	"github.com/cloudflare/circl/sign/slhdsa"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
)

var message = []byte("eyJ0eXAiOiJ4In0.eyJhIjoxfQ")

func TestVerifyEd25519(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k, err := NewEd25519Key(pub)
	if err != nil {
		t.Fatal(err)
	}
	sig := ed25519.Sign(priv, message)
	if !k.Verify(message, sig) {
		t.Fatal("a good signature does not check")
	}
	if k.Verify(message, sig[:63]) || k.Verify(message, append(sig, 0)) {
		t.Fatal("a signature that is not 64 bytes checks")
	}
	// R replaced by a point of small order: refused before any arithmetic.
	weakR := append([]byte(nil), sig...)
	copy(weakR[:32], mustB64(t, "AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"))
	if k.Verify(message, weakR) {
		t.Fatal("a signature with a weak R checks")
	}
	if !k.CanVerify() {
		t.Fatal("Ed25519 must be verifiable")
	}
}

// TestWeakEd25519Encodings checks encodings from keys.json and the length rule.
func TestWeakEd25519Encodings(t *testing.T) {
	weak := []string{
		"AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
		"7P_______________________________________38",
		"xxdqcD1N2E-6PAt2DRBnDyogU_osOczGTsf9d5KsA3o",
		"_________________________________________38",
	}
	for _, w := range weak {
		if !WeakEd25519(mustB64(t, w)) {
			t.Fatalf("%s is not found weak", w)
		}
	}
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	if WeakEd25519(pub) {
		t.Fatal("a fresh key is found weak")
	}
	if !WeakEd25519(pub[:31]) {
		t.Fatal("31 bytes are not found weak")
	}
}

func TestVerifyES256(t *testing.T) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k, err := NewES256Key(&priv.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(message)
	r, s, err := ecdsa.Sign(rand.Reader, priv, h[:])
	if err != nil {
		t.Fatal(err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	if !k.Verify(message, sig) {
		t.Fatal("a good signature does not check")
	}
	if k.Verify(message[1:], sig) || k.Verify(message, sig[:63]) {
		t.Fatal("a bad signature checks")
	}
	// A point off the curve passes the shape check (as in the reference)
	// but no signature checks under it.
	off := map[string]any{"alg": "ES256", "crv": "P-256", "kty": "EC", "x": canon.B64(make([]byte, 32)), "y": canon.B64(append(make([]byte, 31), 1))}
	ko, err := CheckKey(off, ES256)
	if err != nil {
		t.Fatal(err)
	}
	if ko.Verify(message, sig) {
		t.Fatal("a signature checks under a point off the curve")
	}
}

func TestVerifyRS256(t *testing.T) {
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	k, err := CheckKey(map[string]any{"alg": "RS256", "e": "AQAB", "kty": "RSA", "n": canon.B64(priv.N.Bytes())}, PasskeyAlgs...)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(message)
	sig, err := rsa.SignPKCS1v15(rand.Reader, priv, crypto.SHA256, h[:])
	if err != nil {
		t.Fatal(err)
	}
	if !k.Verify(message, sig) {
		t.Fatal("a good signature does not check")
	}
	sig[0] ^= 1
	if k.Verify(message, sig) {
		t.Fatal("a bad signature checks")
	}
	if new(big.Int).SetBytes(k.PublicBytes()).Cmp(priv.N) != 0 {
		t.Fatal("PublicBytes is not the modulus")
	}
}

func TestSLHDSAVerifies(t *testing.T) {
	seed := bytes.Repeat([]byte{7}, 96) // FIPS 205 key generation: SK.seed, SK.prf, PK.seed
	pub, priv, err := slhdsa.GenerateKey(bytes.NewReader(seed), slhdsa.SHA2_256s)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := pub.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	k, err := NewSLHDSAKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !k.CanVerify() {
		t.Fatal("an SLH-DSA key says it cannot be checked")
	}
	sig, err := slhdsa.SignDeterministic(&priv, slhdsa.NewMessage(message), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(sig) != SLHDSA256SignatureSize || !k.Verify(message, sig) {
		t.Fatalf("a good SLH-DSA signature (%d bytes) does not check", len(sig))
	}
	for _, bad := range [][]byte{sig[:len(sig)-1], append(bytes.Clone(sig), 0), nil} {
		if k.Verify(message, bad) {
			t.Fatalf("a signature of %d bytes checks", len(bad))
		}
	}
	sig[100] ^= 1
	if k.Verify(message, sig) {
		t.Fatal("a changed SLH-DSA signature checks")
	}
	// A signature with a context is another signature: the format's is pure
	// SLH-DSA with an empty context.
	withContext, err := slhdsa.SignDeterministic(&priv, slhdsa.NewMessage(message), []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	if k.Verify(message, withContext) {
		t.Fatal("a signature with a context checks")
	}
	var nilKey *Key
	if nilKey.Verify(message, nil) || nilKey.CanVerify() {
		t.Fatal("a nil key verifies")
	}
}

func mustB64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := canon.UnB64(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
