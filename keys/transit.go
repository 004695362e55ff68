package keys

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"

	"github.com/seed-6e06167c/mcp-executor/keys/vault"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
)

// TransitSigner is a key set whose Ed25519 half is a Vault Transit key (it
// signs inside Vault; the private key never leaves it) and whose ML-DSA-87
// half is signed here from a seed read from a secret, since open-source
// Vault's Transit has no ML-DSA key type (Vault Enterprise only).
type TransitSigner struct {
	vault  *vault.Client
	key    *vault.TransitKey
	mldsa  *jwk.LocalSigner // only its ML-DSA-87 key is used
	keys   jwk.KeySet
	source string
}

var _ jwk.Signer = (*TransitSigner)(nil)

// Keys returns the public key set.
func (s *TransitSigner) Keys() jwk.KeySet { return s.keys }

// SignaturesChecked reports true: every signature Sign returns checks
// against Keys() (the Transit one is checked as it arrives, the ML-DSA-87
// one is made here), so record.SignChecked does not check them a second
// time (record.CheckedSigner).
func (s *TransitSigner) SignaturesChecked() bool { return true }

// TransitKey is the Transit key (mount, name, the pinned version).
func (s *TransitSigner) TransitKey() vault.TransitKey { return *s.key }

// Sign signs with Transit for Ed25519 (pinned to the key version read at
// load, so a rotation in Vault does not change the key set under way) and
// locally for ML-DSA-87. A Transit signature is checked against the public
// key before it is returned.
func (s *TransitSigner) Sign(ctx context.Context, alg string, signingInput []byte) ([]byte, error) {
	switch alg {
	case jwk.Ed25519:
		sig, err := s.vault.TransitSign(ctx, s.key.Mount, s.key.Name, s.key.Version, signingInput)
		if err != nil {
			return nil, fmt.Errorf("key set %s: %w", s.source, err)
		}
		if !ed25519.Verify(s.key.Public, signingInput, sig) {
			return nil, fmt.Errorf("key set %s: the signature from Transit key %s/keys/%s version %d does not verify with its public key", s.source, s.key.Mount, s.key.Name, s.key.Version)
		}
		return sig, nil
	case jwk.MLDSA87:
		return s.mldsa.Sign(ctx, alg, signingInput)
	default:
		return nil, fmt.Errorf("signing: a key set has no %q key", alg)
	}
}

func loadTransitKeySet(ctx context.Context, t *transitSource, mlSrc Source, opts Options, create bool) (jwk.Signer, bool, error) {
	created := false
	key, err := t.v.ReadTransitKey(ctx, t.mount, t.name)
	if err != nil && create && errors.Is(err, fs.ErrNotExist) {
		err = t.v.CreateTransitKey(ctx, t.mount, t.name)
		if err == nil {
			created = true
		}
		if err == nil || errors.Is(err, fs.ErrExist) {
			key, err = t.v.ReadTransitKey(ctx, t.mount, t.name)
		}
	}
	if err != nil {
		return nil, false, fmt.Errorf("key set %s: %w", t.spec, err)
	}
	if key.Exportable {
		opts.logger().Warn("vault transit key is exportable: its private key can leave Vault", slog.String("source", t.spec))
	}
	mlSeed, mlCreated, err := readOrCreateHalf(ctx, mlSrc, create, jwk.MLDSA87)
	if err != nil {
		return nil, false, err
	}
	edKey, err := jwk.NewEd25519Key(key.Public)
	if err != nil {
		return nil, false, fmt.Errorf("key set %s: Transit public key: %w", t.spec, err)
	}
	unused, _ := jwk.NewSeeds() // the local signer's Ed25519 half is never used
	ml, err := jwk.NewLocalSigner(unused, mlSeed)
	if err != nil {
		return nil, false, fmt.Errorf("key set %s: %w", t.spec, err)
	}
	return &TransitSigner{
		vault: t.v, key: key, mldsa: ml, source: t.spec,
		keys: jwk.KeySet{Ed25519: edKey, MLDSA87: ml.Keys().MLDSA87},
	}, created || mlCreated, nil
}
