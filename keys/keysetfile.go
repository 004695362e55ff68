package keys

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
)

// Seeds are the two 32-byte seeds a local key set is made from. Either may
// be nil in a file that holds only the ML-DSA-87 half of a key set whose
// Ed25519 half is in Vault Transit.
type Seeds struct {
	Ed25519 []byte
	MLDSA87 []byte
}

// keySetJSON is the key-set file: {"ed25519Seed":"<b64u>","mldsa87Seed":"<b64u>"}.
type keySetJSON struct {
	Ed25519Seed *string `json:"ed25519Seed,omitempty"`
	MLDSA87Seed *string `json:"mldsa87Seed,omitempty"`
}

// ParseSeeds reads a key-set document: a JSON object with the members
// ed25519Seed and mldsa87Seed, each 32 bytes in base64url without padding,
// and no other member. A member may be absent (the caller says which it
// needs). Errors say what is wrong without quoting the document.
func ParseSeeds(doc []byte) (Seeds, error) {
	var f keySetJSON
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	// encoding/json errors can quote the input; none is passed on.
	if err := dec.Decode(&f); err != nil {
		return Seeds{}, fmt.Errorf("not a JSON object with only the members ed25519Seed and mldsa87Seed (strings)")
	}
	if dec.More() {
		return Seeds{}, fmt.Errorf("text after the JSON object")
	}
	var s Seeds
	var err error
	if f.Ed25519Seed != nil {
		if s.Ed25519, err = decodeSeed(*f.Ed25519Seed); err != nil {
			return Seeds{}, fmt.Errorf("ed25519Seed: %w", err)
		}
	}
	if f.MLDSA87Seed != nil {
		if s.MLDSA87, err = decodeSeed(*f.MLDSA87Seed); err != nil {
			return Seeds{}, fmt.Errorf("mldsa87Seed: %w", err)
		}
	}
	return s, nil
}

func decodeSeed(s string) ([]byte, error) {
	b, err := canon.UnB64(s)
	if err != nil {
		return nil, fmt.Errorf("not base64url without padding")
	}
	if len(b) != jwk.SeedSize {
		return nil, fmt.Errorf("%d bytes, want %d", len(b), jwk.SeedSize)
	}
	return b, nil
}

// Marshal writes the key-set document, members present only for non-nil
// seeds, with no trailing newline.
func (s Seeds) Marshal() []byte {
	var f keySetJSON
	if s.Ed25519 != nil {
		v := canon.B64(s.Ed25519)
		f.Ed25519Seed = &v
	}
	if s.MLDSA87 != nil {
		v := canon.B64(s.MLDSA87)
		f.MLDSA87Seed = &v
	}
	b, err := json.Marshal(f)
	if err != nil {
		panic("keys: marshalling seeds: " + err.Error()) // two strings cannot fail
	}
	return b
}

// NewSeeds returns a fresh random pair of seeds.
func NewSeeds() Seeds {
	ed, ml := jwk.NewSeeds()
	return Seeds{Ed25519: ed, MLDSA87: ml}
}
