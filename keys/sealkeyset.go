package keys

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/seal"
)

// SealSeeds are the three seeds a recorder's key set (the seal keys) is
// made from: Ed25519 and ML-DSA-87 (32 bytes each, as a key set's) and
// SLH-DSA-SHA2-256s (96 bytes: SK.seed, SK.prf, PK.seed; FIPS 205).
type SealSeeds struct {
	Ed25519 []byte
	MLDSA87 []byte
	SLHDSA  []byte
}

// sealKeySetJSON is the seal key set document:
// {"ed25519Seed":"<b64u>","mldsa87Seed":"<b64u>","slhdsaSeed":"<b64u>"}.
type sealKeySetJSON struct {
	Ed25519Seed *string `json:"ed25519Seed"`
	MLDSA87Seed *string `json:"mldsa87Seed"`
	SLHDSASeed  *string `json:"slhdsaSeed"`
}

// ParseSealSeeds reads a seal key set document: a JSON object with exactly
// the members ed25519Seed, mldsa87Seed (32 bytes each) and slhdsaSeed (96
// bytes), in base64url without padding. Errors say what is wrong without
// quoting the document.
func ParseSealSeeds(doc []byte) (SealSeeds, error) {
	var f sealKeySetJSON
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return SealSeeds{}, fmt.Errorf("not a JSON object with only the members ed25519Seed, mldsa87Seed and slhdsaSeed (strings)")
	}
	if dec.More() {
		return SealSeeds{}, fmt.Errorf("text after the JSON object")
	}
	if f.Ed25519Seed == nil || f.MLDSA87Seed == nil || f.SLHDSASeed == nil {
		return SealSeeds{}, fmt.Errorf("a seal key set needs ed25519Seed, mldsa87Seed and slhdsaSeed")
	}
	var s SealSeeds
	var err error
	if s.Ed25519, err = decodeSeed(*f.Ed25519Seed); err != nil {
		return SealSeeds{}, fmt.Errorf("ed25519Seed: %w", err)
	}
	if s.MLDSA87, err = decodeSeed(*f.MLDSA87Seed); err != nil {
		return SealSeeds{}, fmt.Errorf("mldsa87Seed: %w", err)
	}
	b, err := canon.UnB64(*f.SLHDSASeed)
	if err != nil {
		return SealSeeds{}, fmt.Errorf("slhdsaSeed: not base64url without padding")
	}
	if len(b) != seal.SLHDSASeedSize {
		return SealSeeds{}, fmt.Errorf("slhdsaSeed: %d bytes, want %d", len(b), seal.SLHDSASeedSize)
	}
	s.SLHDSA = b
	return s, nil
}

// Marshal writes the seal key set document, with no trailing newline.
func (s SealSeeds) Marshal() []byte {
	ed, ml, slh := canon.B64(s.Ed25519), canon.B64(s.MLDSA87), canon.B64(s.SLHDSA)
	b, err := json.Marshal(sealKeySetJSON{Ed25519Seed: &ed, MLDSA87Seed: &ml, SLHDSASeed: &slh})
	if err != nil {
		panic("keys: marshalling seal seeds: " + err.Error()) // three strings cannot fail
	}
	return b
}

// NewSealSeeds returns fresh random seeds for a recorder's key set.
func NewSealSeeds() SealSeeds {
	ed, ml, slh := seal.NewSeeds()
	return SealSeeds{Ed25519: ed, MLDSA87: ml, SLHDSA: slh}
}

// Signer makes the recorder's signer from the seeds.
func (s SealSeeds) Signer() (*seal.LocalSigner, error) {
	return seal.NewLocalSigner(s.Ed25519, s.MLDSA87, s.SLHDSA)
}

// LoadSealKeySet reads the seal key set named by spec (a file path, env:,
// vault: KV v2, or secret:) and returns the recorder's signer. A Vault
// Transit key cannot hold it: open-source Vault's Transit signs Ed25519
// but has no ML-DSA or SLH-DSA key type, and the three keys of a seal are
// one set kept together.
func LoadSealKeySet(ctx context.Context, spec, baseDir string, opts Options) (*seal.LocalSigner, error) {
	s, _, err := loadSealKeySet(ctx, spec, baseDir, opts, false)
	return s, err
}

// LoadOrCreateSealKeySet is LoadSealKeySet, but a set that does not exist
// yet is made with fresh random seeds and stored where its source can hold
// it (a file, a Vault KV field); created says so.
func LoadOrCreateSealKeySet(ctx context.Context, spec, baseDir string, opts Options) (signer *seal.LocalSigner, created bool, err error) {
	return loadSealKeySet(ctx, spec, baseDir, opts, true)
}

func loadSealKeySet(ctx context.Context, spec, baseDir string, opts Options, create bool) (*seal.LocalSigner, bool, error) {
	if strings.HasPrefix(spec, "vault-transit:") {
		return nil, false, fmt.Errorf("seal key set %s: a Vault Transit key cannot hold a recorder's keys: open-source Vault's Transit has no ML-DSA or SLH-DSA key type; keep the seal seeds in a file or an env, vault (KV v2) or secret source", spec)
	}
	src, err := ParseSource(spec, baseDir, opts)
	if err != nil {
		return nil, false, fmt.Errorf("seal key set: %w", err)
	}
	doc, created, err := readOrCreate(ctx, src, create, func() []byte { return NewSealSeeds().Marshal() })
	if err != nil {
		return nil, false, fmt.Errorf("seal key set %s: %w", src.Name(), err)
	}
	seeds, err := ParseSealSeeds(doc)
	if err != nil {
		return nil, false, fmt.Errorf("seal key set %s (%s): %w", src.Name(), src.Describe(), err)
	}
	signer, err := seeds.Signer()
	if err != nil {
		return nil, false, fmt.Errorf("seal key set %s: %w", src.Name(), err)
	}
	return signer, created, nil
}

// SealKeysFingerprint is the fingerprint a checker names the recorder by
// (verify --sealer).
func SealKeysFingerprint(s seal.Signer) string { return s.Keys().Fingerprint() }
