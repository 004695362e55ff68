package jwk

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudflare/circl/sign/slhdsa"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
)

func TestSealKeySetsVectors(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("../../testdata/provared-vectors", "seal-key-sets.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Function string `json:"function"`
		Cases    []struct {
			Name     string `json:"name"`
			Keys     []any  `json:"keys"`
			Expected struct {
				Ok string `json:"ok"`
			} `json:"expected"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &f); err != nil || f.Function != "keySetFingerprint" || len(f.Cases) == 0 {
		t.Fatalf("seal-key-sets.json: %v %q", err, f.Function)
	}
	for _, c := range f.Cases {
		if got := KeyListFingerprint(c.Keys); got != c.Expected.Ok {
			t.Errorf("%s: %s, want %s", c.Name, got, c.Expected.Ok)
		}
		// A set in the recorder's order reads as one, with the same fingerprint.
		if s, err := CheckSealKeySet(c.Keys); err == nil {
			if s.Fingerprint() != c.Expected.Ok {
				t.Errorf("%s: the set's fingerprint %s, want %s", c.Name, s.Fingerprint(), c.Expected.Ok)
			}
		} else if c.Name == "a recorder's key set" {
			t.Errorf("%s: %v", c.Name, err)
		}
	}
	t.Logf("seal-key-sets.json: %d cases", len(f.Cases))
}

func TestSealKeySetRefused(t *testing.T) {
	_, priv, _ := slhdsa.GenerateKey(bytes.NewReader(bytes.Repeat([]byte{1}, 96)), slhdsa.SHA2_256s)
	pub, _ := priv.PublicKey().MarshalBinary()
	slh, err := NewSLHDSAKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewLocalSigner(bytes.Repeat([]byte{2}, 32), bytes.Repeat([]byte{3}, 32))
	if err != nil {
		t.Fatal(err)
	}
	ed, ml := s.Keys().Ed25519.JWK, s.Keys().MLDSA87.JWK
	ok := []any{ed, ml, slh.JWK}
	set, err := CheckSealKeySet(ok)
	if err != nil {
		t.Fatal(err)
	}
	if set.Fingerprint() != canon.Fingerprint(canon.MustMarshal(ok)) || set.Key(SLHDSA256) != set.SLHDSA || !set.Equal(set) {
		t.Fatal("the set's fingerprint or keys")
	}
	for name, v := range map[string]any{
		"two keys":         []any{ed, ml},
		"four keys":        []any{ed, ml, slh.JWK, slh.JWK},
		"another order":    []any{slh.JWK, ed, ml},
		"ML-DSA third":     []any{ed, ml, ml},
		"not a list":       map[string]any{},
		"a private member": []any{ed, ml, map[string]any{"alg": SLHDSA256, "kty": "AKP", "pub": slh.JWK["pub"], "priv": "AA"}},
		"a short pub":      []any{ed, ml, map[string]any{"alg": SLHDSA256, "kty": "AKP", "pub": canon.B64(pub[:63])}},
	} {
		if _, err := CheckSealKeySet(v); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
