package seal

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"

	"github.com/cloudflare/circl/sign/mldsa/mldsa87"
	"github.com/cloudflare/circl/sign/slhdsa"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
)

// SLHDSASeedSize is the size of the seed an SLH-DSA-SHA2-256s key is made
// from: SK.seed, SK.prf and PK.seed, 32 bytes each (FIPS 205 section 10.1).
const SLHDSASeedSize = 96

// Signer signs for one recorder's key set. Sign is asked for each method
// in turn, over the same signing input.
type Signer interface {
	Keys() jwk.SealKeySet
	Sign(ctx context.Context, alg string, signingInput []byte) ([]byte, error) // alg "Ed25519" | "ML-DSA-87" | "SLH-DSA-SHA2-256s"
}

// LocalSigner holds the three private keys of a recorder in this process.
type LocalSigner struct {
	ed   ed25519.PrivateKey
	ml   *mldsa87.PrivateKey
	slh  *slhdsa.PrivateKey
	keys jwk.SealKeySet
}

var _ Signer = (*LocalSigner)(nil)

// NewLocalSigner makes a recorder's key set from its seeds: Ed25519 and
// ML-DSA-87 as jwk.NewLocalSigner makes them (32 bytes each), and
// SLH-DSA-SHA2-256s by FIPS 205 slh_keygen_internal from 96 bytes.
func NewLocalSigner(ed25519Seed, mldsaSeed, slhdsaSeed []byte) (*LocalSigner, error) {
	pair, err := jwk.NewLocalSigner(ed25519Seed, mldsaSeed)
	if err != nil {
		return nil, fmt.Errorf("making a recorder's key set: %w", err)
	}
	if len(slhdsaSeed) != SLHDSASeedSize {
		return nil, fmt.Errorf("making a recorder's key set: the SLH-DSA seed must be %d bytes", SLHDSASeedSize)
	}
	pub, priv, err := slhdsa.GenerateKey(bytes.NewReader(slhdsaSeed), slhdsa.SHA2_256s)
	if err != nil {
		return nil, fmt.Errorf("making a recorder's key set: %w", err)
	}
	raw, err := pub.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("making a recorder's key set: %w", err)
	}
	slhKey, err := jwk.NewSLHDSAKey(raw)
	if err != nil {
		return nil, fmt.Errorf("making a recorder's key set: %w", err)
	}
	var seed [mldsa87.SeedSize]byte
	copy(seed[:], mldsaSeed)
	_, mlPriv := mldsa87.NewKeyFromSeed(&seed)
	keys := pair.Keys()
	return &LocalSigner{
		ed: ed25519.NewKeyFromSeed(ed25519Seed), ml: mlPriv, slh: &priv,
		keys: jwk.SealKeySet{Ed25519: keys.Ed25519, MLDSA87: keys.MLDSA87, SLHDSA: slhKey},
	}, nil
}

// NewSeeds returns fresh random seeds for NewLocalSigner.
func NewSeeds() (ed25519Seed, mldsaSeed, slhdsaSeed []byte) {
	ed25519Seed, mldsaSeed = jwk.NewSeeds()
	slhdsaSeed = make([]byte, SLHDSASeedSize)
	rand.Read(slhdsaSeed) // never fails (crypto/rand, Go 1.24+)
	return ed25519Seed, mldsaSeed, slhdsaSeed
}

// Keys returns the public key set.
func (s *LocalSigner) Keys() jwk.SealKeySet { return s.keys }

// Sign signs with the key for alg. ML-DSA-87 and SLH-DSA signatures are
// hedged (randomised), pure, with an empty context. It returns as soon as
// ctx is done before a signature is begun; a signature under way runs to
// its end.
func (s *LocalSigner) Sign(ctx context.Context, alg string, signingInput []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	switch alg {
	case jwk.Ed25519:
		return ed25519.Sign(s.ed, signingInput), nil
	case jwk.MLDSA87:
		sig := make([]byte, mldsa87.SignatureSize)
		if err := mldsa87.SignTo(s.ml, signingInput, nil, true, sig); err != nil {
			return nil, fmt.Errorf("signing with ML-DSA-87: %w", err)
		}
		return sig, nil
	case jwk.SLHDSA256:
		sig, err := slhdsa.SignRandomized(s.slh, rand.Reader, slhdsa.NewMessage(signingInput), nil)
		if err != nil {
			return nil, fmt.Errorf("signing with SLH-DSA-SHA2-256s: %w", err)
		}
		return sig, nil
	}
	return nil, fmt.Errorf("a recorder does not sign with %q", alg)
}
