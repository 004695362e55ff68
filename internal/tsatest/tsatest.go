// Package tsatest makes RFC 3161 time-stamp tokens for tests, signed with
// an Ed25519 key of a made-up service, at a time the test chooses.
//
// It is a stand-in for a time-stamp service, used only where nothing real
// can do what a test needs: a real service states the time it is asked at,
// and the checker's date rules (an entry dated after its stamp, stamps
// going backwards) need stamps of other times. Tests that get stamps from
// real services (Sigstore's timestamp-server, OpenSSL's ts) are the
// integration tests of receipts/stamp and sidecar/cli.
package tsatest

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"fmt"
	"math/big"
	"time"
)

// Service is a made-up time-stamp service.
type Service struct {
	key  ed25519.PrivateKey
	cert []byte
	// Fingerprint is the SHA-256 of its certificate, base64url: how a
	// checker names it.
	Fingerprint string
	serial      int64
}

// New makes a service from a 32-byte seed (the same seed, the same
// service), its certificate in force from 2000 to 2100.
func New(seed []byte) (*Service, error) {
	if len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("tsatest: the seed is %d bytes, want 32", len(seed))
	}
	key := ed25519.NewKeyFromSeed(seed)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "Made-up time-stamp service (tests)"},
		NotBefore:    time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC),
		NotAfter:     time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC),
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageTimeStamping},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		IsCA:         true, BasicConstraintsValid: true,
	}
	cert, err := x509.CreateCertificate(zeroReader{}, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("tsatest: making the certificate: %w", err)
	}
	h := sha256.Sum256(cert)
	return &Service{key: key, cert: cert, Fingerprint: base64.RawURLEncoding.EncodeToString(h[:])}, nil
}

// zeroReader keeps certificate making deterministic (Ed25519 needs no
// randomness; x509 reads some anyway).
type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// Certificate is the service's certificate, DER.
func (s *Service) Certificate() []byte { return bytes.Clone(s.cert) }

// Options change what a token says, for tests of refusals.
type Options struct {
	Nonce []byte // nil for none
	// AccuracySeconds, when not 0, is the accuracy the token states.
	AccuracySeconds int
}

// Token stamps the 32 bytes of a fingerprint at the given time.
func (s *Service) Token(stamped []byte, at time.Time, o Options) []byte {
	s.serial++
	sha256Alg := seq(tlv(0x06, []byte{0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01}), tlv(0x05, nil))
	parts := [][]byte{
		tlv(0x02, []byte{1}),
		tlv(0x06, []byte{0x2a, 0x03, 0x04}), // a policy
		seq(sha256Alg, tlv(0x04, stamped)),
		tlv(0x02, big.NewInt(s.serial).Bytes()),
		tlv(0x18, []byte(at.UTC().Format("20060102150405Z"))),
	}
	if o.AccuracySeconds != 0 {
		parts = append(parts, seq(tlv(0x02, big.NewInt(int64(o.AccuracySeconds)).Bytes())))
	}
	if o.Nonce != nil {
		parts = append(parts, tlv(0x02, o.Nonce))
	}
	tstInfo := seq(parts...)
	digest := sha256.Sum256(tstInfo)
	certHash := sha256.Sum256(s.cert)
	attrs := bytes.Join([][]byte{
		seq(tlv(0x06, []byte{0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x03}), tlv(0x31, tlv(0x06, []byte{0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x10, 0x01, 0x04}))),
		seq(tlv(0x06, []byte{0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x04}), tlv(0x31, tlv(0x04, digest[:]))),
		seq(tlv(0x06, []byte{0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x10, 0x02, 0x2f}), tlv(0x31, seq(seq(seq(tlv(0x04, certHash[:])))))),
	}, nil)
	sig := ed25519.Sign(s.key, tlv(0x31, attrs))
	pub, _ := s.key.Public().(ed25519.PublicKey) // an ed25519.PrivateKey's public key is always one
	skid := sha256.Sum256(pub)
	signer := seq(
		tlv(0x02, []byte{3}),
		tlv(0x80, skid[:20]),
		sha256Alg,
		tlv(0xa0, attrs),
		seq(tlv(0x06, []byte{0x2b, 0x65, 0x70})),
		tlv(0x04, sig),
	)
	signedData := seq(
		tlv(0x02, []byte{3}),
		tlv(0x31, sha256Alg),
		seq(tlv(0x06, []byte{0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x10, 0x01, 0x04}), tlv(0xa0, tlv(0x04, tstInfo))),
		tlv(0xa0, s.cert),
		tlv(0x31, signer),
	)
	return seq(tlv(0x06, []byte{0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x02}), tlv(0xa0, signedData))
}

func tlv(tag byte, content []byte) []byte {
	out := []byte{tag}
	n := len(content)
	switch {
	case n < 128:
		out = append(out, byte(n))
	case n < 256:
		out = append(out, 0x81, byte(n))
	default:
		out = append(out, 0x82, byte(n>>8), byte(n))
	}
	return append(out, content...)
}

func seq(parts ...[]byte) []byte { return tlv(0x30, bytes.Join(parts, nil)) }
