package jwk

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"slices"

	"github.com/cloudflare/circl/sign/mldsa/mldsa87"
)

// SeedSize is the size of each of the two seeds a local key set is made from.
const SeedSize = 32

// Signer signs for one key set. Implementations: LocalSigner here; package
// keys adds Vault Transit. A record is written only with both signatures:
// callers ask for "Ed25519" and then "ML-DSA-87" over the same payload.
type Signer interface {
	Keys() KeySet
	Sign(ctx context.Context, alg string, signingInput []byte) ([]byte, error) // alg "Ed25519" | "ML-DSA-87"
}

// LocalSigner holds both private keys of a key set in this process.
type LocalSigner struct {
	ed   ed25519.PrivateKey
	ml   *mldsa87.PrivateKey
	keys KeySet
}

var _ Signer = (*LocalSigner)(nil)

// NewLocalSigner makes a key set from two 32-byte seeds: the Ed25519 key by
// RFC 8032 (ed25519.NewKeyFromSeed) and the ML-DSA-87 key by FIPS 204
// ML-DSA.KeyGen_internal (mldsa87.NewKeyFromSeed).
func NewLocalSigner(ed25519Seed, mldsaSeed []byte) (*LocalSigner, error) {
	if len(ed25519Seed) != SeedSize || len(mldsaSeed) != SeedSize {
		return nil, fmt.Errorf("making a local key set: each seed must be %d bytes", SeedSize)
	}
	edPriv := ed25519.NewKeyFromSeed(ed25519Seed)
	var seed [mldsa87.SeedSize]byte
	copy(seed[:], mldsaSeed)
	mlPub, mlPriv := mldsa87.NewKeyFromSeed(&seed)
	edPub, ok := edPriv.Public().(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("making a local key set: crypto/ed25519 returned a public key of type %T", edPriv.Public())
	}
	edKey, err := NewEd25519Key(edPub)
	if err != nil {
		return nil, fmt.Errorf("making a local key set: %w", err)
	}
	mlKey, err := NewMLDSA87Key(mlPub)
	if err != nil {
		return nil, fmt.Errorf("making a local key set: %w", err)
	}
	return &LocalSigner{ed: edPriv, ml: mlPriv, keys: KeySet{Ed25519: edKey, MLDSA87: mlKey}}, nil
}

// NewSeeds returns two fresh random 32-byte seeds for NewLocalSigner.
func NewSeeds() (ed25519Seed, mldsaSeed []byte) {
	ed25519Seed = make([]byte, SeedSize)
	mldsaSeed = make([]byte, SeedSize)
	rand.Read(ed25519Seed) // never fails (crypto/rand, Go 1.24+)
	rand.Read(mldsaSeed)
	return ed25519Seed, mldsaSeed
}

// Keys returns the public key set.
func (s *LocalSigner) Keys() KeySet { return s.keys }

// Sign signs signingInput with the key of the set for alg. ML-DSA-87
// signatures are hedged (randomised), pure, with an empty context.
func (s *LocalSigner) Sign(ctx context.Context, alg string, signingInput []byte) ([]byte, error) {
	return s.AppendSign(ctx, alg, nil, signingInput)
}

// SignsInProcess reports that s signs on this process's cores (a key set
// held here), for callers that choose how many signatures to run at once.
func (s *LocalSigner) SignsInProcess() bool { return s != nil }

// SignsInProcess reports whether s says it signs on this process's cores
// (a key set held here, as LocalSigner), not elsewhere (Vault Transit):
// for callers that choose how many signatures to run at once, or whether
// one needs a deadline.
func SignsInProcess(s Signer) bool {
	x, ok := s.(interface{ SignsInProcess() bool })
	return ok && x.SignsInProcess()
}

// AppendSigner is a Signer that can append its signature to a buffer it
// is given (and keeps no hold on the buffer or the input), so that a
// caller that only reads the signature once can use one buffer again.
type AppendSigner interface {
	Signer
	AppendSign(ctx context.Context, alg string, dst, signingInput []byte) ([]byte, error)
}

var _ AppendSigner = (*LocalSigner)(nil)

// AppendSign is Sign appending the signature to dst: the same signature
// (Ed25519's is deterministic; ML-DSA-87's hedged as Sign's are).
func (s *LocalSigner) AppendSign(ctx context.Context, alg string, dst, signingInput []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("signing with %s: %w", alg, err)
	}
	switch alg {
	case Ed25519:
		return append(dst, ed25519.Sign(s.ed, signingInput)...), nil
	case MLDSA87:
		dst = slices.Grow(dst, mldsa87.SignatureSize)
		sig := dst[len(dst) : len(dst)+mldsa87.SignatureSize]
		if err := mldsa87.SignTo(s.ml, signingInput, nil, true, sig); err != nil {
			return nil, fmt.Errorf("signing with ML-DSA-87: %w", err)
		}
		return dst[:len(dst)+mldsa87.SignatureSize], nil
	default:
		return nil, fmt.Errorf("signing: a key set has no %q key", alg)
	}
}
