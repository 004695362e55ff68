package page

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"testing"
)

func TestKeyFromSPKI(t *testing.T) {
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	edPub, _, _ := ed25519.GenerateKey(rand.Reader)
	rsa2048, _ := rsa.GenerateKey(rand.Reader, 2048)
	rsa1024, _ := rsa.GenerateKey(rand.Reader, 1024)
	spki := func(k any) []byte {
		b, err := x509.MarshalPKIXPublicKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cases := []struct {
		name string
		spki []byte
		alg  int
		want string // "" for refused
	}{
		{"ES256", spki(&p256.PublicKey), coseES256, "ES256"},
		{"Ed25519", spki(edPub), coseEdDSA, "Ed25519"},
		{"RS256", spki(&rsa2048.PublicKey), coseRS256, "RS256"},
		{"P-256 named RS256", spki(&p256.PublicKey), coseRS256, ""},
		{"P-384", spki(&p384.PublicKey), coseES256, ""},
		{"Ed25519 named ES256", spki(edPub), coseES256, ""},
		{"RSA of 1024 bits", spki(&rsa1024.PublicKey), coseRS256, ""},
		{"not a key", []byte{0x30, 0x00}, coseES256, ""},
	}
	for _, c := range cases {
		k, err := keyFromSPKI(c.spki, c.alg)
		switch {
		case c.want == "" && err == nil:
			t.Errorf("%s: taken as %s", c.name, k.Alg)
		case c.want != "" && (err != nil || k.Alg != c.want):
			t.Errorf("%s: %v %v", c.name, k, err)
		}
	}
}

func TestRegistrationNeedsUserVerification(t *testing.T) {
	origin := "http://localhost:8443"
	challenge := make([]byte, 32)
	pk := newSoftPasskey(t, origin, "localhost")
	for name, flags := range map[string]byte{"present only": 0x41, "verified, no credential": 0x05, "not present": 0x44} {
		r := pk.register(challenge)
		ad := pk.authData(flags, nil)
		r.AuthenticatorData = b64(ad)
		if _, err := checkRegistration(r, challenge, origin, "localhost", nowUTC()); err == nil {
			t.Errorf("%s: registered", name)
		}
	}
	other := newSoftPasskey(t, origin, "example.org")
	if _, err := checkRegistration(other.register(challenge), challenge, origin, "localhost", nowUTC()); err == nil {
		t.Error("a passkey for another rpId: registered")
	}
	if _, err := checkRegistration(pk.register(challenge), make([]byte, 31), origin, "localhost", nowUTC()); err == nil {
		t.Error("another challenge: registered")
	}
}
