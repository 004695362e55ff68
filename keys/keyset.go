package keys

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
)

// KeySetSpec names where a key set lives.
//
// With Source a key-set document (a file, env:, vault:, secret:), both
// seeds come from it and MLDSA must be empty. With Source
// "vault-transit:<key>", the Ed25519 half signs inside Vault Transit and the
// ML-DSA-87 half comes from the key-set document named by MLDSA (only its
// mldsa87Seed member): open-source Vault's Transit has no ML-DSA key type
// (Vault Enterprise only), so that half cannot live in Transit.
type KeySetSpec struct {
	Source string
	MLDSA  string
}

// LoadKeySet reads the key set spec names and returns its signer.
func LoadKeySet(ctx context.Context, spec KeySetSpec, baseDir string, opts Options) (jwk.Signer, error) {
	s, _, err := loadKeySet(ctx, spec, baseDir, opts, false)
	return s, err
}

// LoadOrCreateKeySet is LoadKeySet, but a key set that does not exist yet is
// made with fresh random seeds and stored where its source can hold it (a
// file, a Vault KV field, a Transit key). created says it was made. For an
// env: source it fails; for a secret: source it returns a *ManifestNeeded
// error holding a Secret manifest with the new value for the user to apply.
func LoadOrCreateKeySet(ctx context.Context, spec KeySetSpec, baseDir string, opts Options) (signer jwk.Signer, created bool, err error) {
	return loadKeySet(ctx, spec, baseDir, opts, true)
}

func loadKeySet(ctx context.Context, spec KeySetSpec, baseDir string, opts Options, create bool) (jwk.Signer, bool, error) {
	src, err := ParseSource(spec.Source, baseDir, opts)
	if err != nil {
		return nil, false, fmt.Errorf("key set: %w", err)
	}
	if t, ok := src.(*transitSource); ok {
		return loadTransitKeySet(ctx, t, spec, baseDir, opts, create)
	}
	if spec.MLDSA != "" {
		return nil, false, fmt.Errorf("key set %s: a separate ML-DSA-87 source is only for a vault-transit: key set", src.Name())
	}
	seeds, created, err := readOrCreateSeeds(ctx, src, create, NewSeeds)
	if err != nil {
		return nil, false, err
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

// readOrCreateSeeds reads the key-set document of src; when it is missing
// and create is set, it stores fresh seeds from fresh() first.
func readOrCreateSeeds(ctx context.Context, src Source, create bool, fresh func() Seeds) (Seeds, bool, error) {
	created := false
	doc, err := src.Read(ctx)
	if err != nil && create && errors.Is(err, fs.ErrNotExist) {
		if created, err = createValue(ctx, src, fresh().Marshal()); err == nil {
			doc, err = src.Read(ctx)
		}
	}
	if err != nil {
		return Seeds{}, false, fmt.Errorf("key set %s: %w", src.Name(), err)
	}
	seeds, err := ParseSeeds(doc)
	if err != nil {
		return Seeds{}, false, fmt.Errorf("key set %s (%s): %w", src.Name(), src.Describe(), err)
	}
	return seeds, created, nil
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
