package keys

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
)

// KeySetSpec names where a key set lives: in one source, or split in two.
//
// With MLDSA empty, Source holds the whole key-set document (a file, env:,
// vault:, secret:).
//
// With MLDSA set, the set is split: Source gives the Ed25519 half and MLDSA
// the ML-DSA-87 half. The Ed25519 half is either a Vault Transit key
// ("vault-transit:<key>", signing inside Vault; the private key never leaves
// it) or a source holding that seed; the ML-DSA-87 half is always a source
// holding its seed, since open-source Vault's Transit has no ML-DSA key type
// (Vault Enterprise only). A half's source holds either a key-set document
// with only that half's member, or the bare seed (43 characters of
// base64url); one the executor makes holds the document.
type KeySetSpec struct {
	Source string
	MLDSA  string
}

// LoadKeySet reads the key set spec names and returns its signer.
func LoadKeySet(ctx context.Context, spec KeySetSpec, baseDir string, opts Options) (jwk.Signer, error) {
	s, _, err := loadKeySet(ctx, spec, baseDir, opts, false)
	return s, err
}

// LoadOrCreateKeySet is LoadKeySet, but what does not exist yet is made
// with fresh random seeds and stored where its source can hold it (a file,
// a Vault KV field, a Transit key). created says something was made. For
// an env: source it fails; for a secret: source it returns a
// *ManifestNeeded error holding a Secret manifest with the new value for
// the user to apply.
func LoadOrCreateKeySet(ctx context.Context, spec KeySetSpec, baseDir string, opts Options) (signer jwk.Signer, created bool, err error) {
	return loadKeySet(ctx, spec, baseDir, opts, true)
}

func loadKeySet(ctx context.Context, spec KeySetSpec, baseDir string, opts Options, create bool) (jwk.Signer, bool, error) {
	src, err := ParseSource(spec.Source, baseDir, opts)
	if err != nil {
		return nil, false, fmt.Errorf("key set: %w", err)
	}
	transitSrc, transit := src.(*transitSource)
	if spec.MLDSA == "" {
		if transit {
			return nil, false, fmt.Errorf("key set %s: a Vault Transit key is only the Ed25519 half; name a second source for the ML-DSA-87 seed: open-source Vault's Transit has no ML-DSA keys (enterprise only)", src.Name())
		}
		return loadWholeKeySet(ctx, src, create)
	}
	mlSrc, err := ParseSource(spec.MLDSA, baseDir, opts)
	if err != nil {
		return nil, false, fmt.Errorf("key set %s, ML-DSA-87 half: %w", src.Name(), err)
	}
	if _, ok := mlSrc.(*transitSource); ok {
		return nil, false, fmt.Errorf("key set %s: the ML-DSA-87 half cannot be a Vault Transit key (open-source Vault has no ML-DSA keys)", src.Name())
	}
	if transit {
		return loadTransitKeySet(ctx, transitSrc, mlSrc, opts, create)
	}
	edSeed, edCreated, err := readOrCreateHalf(ctx, src, create, jwk.Ed25519)
	if err != nil {
		return nil, false, err
	}
	mlSeed, mlCreated, err := readOrCreateHalf(ctx, mlSrc, create, jwk.MLDSA87)
	if err != nil {
		return nil, false, err
	}
	signer, err := jwk.NewLocalSigner(edSeed, mlSeed)
	if err != nil {
		return nil, false, fmt.Errorf("key set %s + %s: %w", src.Name(), mlSrc.Name(), err)
	}
	return signer, edCreated || mlCreated, nil
}

func loadWholeKeySet(ctx context.Context, src Source, create bool) (jwk.Signer, bool, error) {
	doc, created, err := readOrCreate(ctx, src, create, func() []byte { return NewSeeds().Marshal() })
	if err != nil {
		return nil, false, fmt.Errorf("key set %s: %w", src.Name(), err)
	}
	seeds, err := ParseSeeds(doc)
	if err != nil {
		return nil, false, fmt.Errorf("key set %s (%s): %w", src.Name(), src.Describe(), err)
	}
	if seeds.Ed25519 == nil || seeds.MLDSA87 == nil {
		return nil, false, fmt.Errorf("key set %s: needs both ed25519Seed and mldsa87Seed", src.Name())
	}
	signer, err := jwk.NewLocalSigner(seeds.Ed25519, seeds.MLDSA87)
	if err != nil {
		return nil, false, fmt.Errorf("key set %s: %w", src.Name(), err)
	}
	return signer, created, nil
}

// readOrCreateHalf reads the seed of one half (alg jwk.Ed25519 or
// jwk.MLDSA87) of a split key set.
func readOrCreateHalf(ctx context.Context, src Source, create bool, alg string) ([]byte, bool, error) {
	fresh := func() []byte {
		s := NewSeeds()
		if alg == jwk.Ed25519 {
			return Seeds{Ed25519: s.Ed25519}.Marshal()
		}
		return Seeds{MLDSA87: s.MLDSA87}.Marshal()
	}
	doc, created, err := readOrCreate(ctx, src, create, fresh)
	if err != nil {
		return nil, false, fmt.Errorf("key set, %s half %s: %w", alg, src.Name(), err)
	}
	seed, err := ParseHalf(doc, alg)
	if err != nil {
		return nil, false, fmt.Errorf("key set, %s half %s (%s): %w", alg, src.Name(), src.Describe(), err)
	}
	return seed, created, nil
}

// ParseHalf reads the seed of one half of a split key set (alg
// jwk.Ed25519 or jwk.MLDSA87): a key-set document holding only that
// half's member, or the bare seed in base64url.
func ParseHalf(doc []byte, alg string) ([]byte, error) {
	if len(doc) == 0 || doc[0] != '{' {
		return decodeSeed(string(doc))
	}
	s, err := ParseSeeds(doc)
	if err != nil {
		return nil, err
	}
	mine, other, member, otherMember := s.Ed25519, s.MLDSA87, "ed25519Seed", "mldsa87Seed"
	if alg == jwk.MLDSA87 {
		mine, other, member, otherMember = s.MLDSA87, s.Ed25519, "mldsa87Seed", "ed25519Seed"
	}
	if other != nil {
		return nil, fmt.Errorf("holds %s, but this source is only the %s half; remove it", otherMember, alg)
	}
	if mine == nil {
		return nil, fmt.Errorf("no %s", member)
	}
	return mine, nil
}

// readOrCreate reads src; when the value is missing and create is set, it
// stores fresh() first (or takes what a concurrent writer stored).
func readOrCreate(ctx context.Context, src Source, create bool, fresh func() []byte) ([]byte, bool, error) {
	created := false
	v, err := src.Read(ctx)
	if err != nil && create && errors.Is(err, fs.ErrNotExist) {
		if created, err = createValue(ctx, src, fresh()); err == nil {
			v, err = src.Read(ctx)
		}
	}
	return v, created, err
}

// createValue stores value in src when src can hold one. It reports false
// without error when another writer created the value first (the caller
// then reads that one).
func createValue(ctx context.Context, src Source, value []byte) (bool, error) {
	c, ok := src.(Creator)
	if !ok {
		return false, fmt.Errorf("%s is missing and cannot be created by the executor: %w", src.Describe(), fs.ErrNotExist)
	}
	err := c.Create(ctx, value)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, nil
}
