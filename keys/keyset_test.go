package keys

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/keys/vault"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestKeySetGolden loads testdata/keyset.json (fixed seeds) and compares
// the public key set with testdata/keyset.golden.json.
func TestKeySetGolden(t *testing.T) {
	raw, err := os.ReadFile("testdata/keyset.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir() // the checked-in file is 0644; a key file must be 0600
	writeFile(t, dir, "keyset.json", string(raw), 0o600)
	s, err := LoadKeySet(context.Background(), KeySetSpec{Source: "keyset.json"}, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ks := s.Keys()
	got, _ := json.MarshalIndent(map[string]any{
		"ed25519":           ks.Ed25519.JWK,
		"mldsa87Thumbprint": ks.MLDSA87.Thumbprint,
		"fingerprint":       ks.Fingerprint(),
	}, "", "  ")
	got = append(got, '\n')
	if *update {
		if err := os.WriteFile("testdata/keyset.golden.json", got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("testdata/keyset.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("public key set:\n%s\nwant:\n%s", got, want)
	}
}

func TestLoadOrCreateKeySetFile(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	opts, logs := testOptions(t)
	spec := KeySetSpec{Source: "state/agent.keys.json"}
	if _, err := LoadKeySet(ctx, spec, dir, opts); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("LoadKeySet of a missing file: %v, want fs.ErrNotExist", err)
	}
	s1, created, err := LoadOrCreateKeySet(ctx, spec, dir, opts)
	if err != nil || !created {
		t.Fatalf("LoadOrCreateKeySet: created %t, %v", created, err)
	}
	p := filepath.Join(dir, "state/agent.keys.json")
	info, _ := os.Stat(p)
	if info.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", info.Mode().Perm())
	}
	raw, _ := os.ReadFile(p)
	var doc map[string]string
	if err := json.Unmarshal(raw, &doc); err != nil || len(doc) != 2 || len(doc["ed25519Seed"]) != 43 || len(doc["mldsa87Seed"]) != 43 {
		t.Errorf("key file %q: want {ed25519Seed, mldsa87Seed} of 43 characters each (%v)", raw, err)
	}
	s2, created, err := LoadOrCreateKeySet(ctx, spec, dir, opts)
	if err != nil || created {
		t.Fatalf("second LoadOrCreateKeySet: created %t, %v", created, err)
	}
	if !s1.Keys().Equal(s2.Keys()) {
		t.Errorf("the key set changed between loads")
	}
	for _, alg := range jwk.KeySetAlgs {
		sig, err := s2.Sign(ctx, alg, []byte("payload"))
		if err != nil || !s1.Keys().Key(alg).Verify([]byte("payload"), sig) {
			t.Errorf("%s: signature does not verify (%v)", alg, err)
		}
	}
	assertNoSecret(t, "log", logs.String())
	if strings.Contains(logs.String(), doc["ed25519Seed"]) || strings.Contains(logs.String(), doc["mldsa87Seed"]) {
		t.Errorf("a seed is in the log: %s", logs)
	}
}

func TestLoadKeySetFromEnv(t *testing.T) {
	seeds := NewSeeds()
	t.Setenv("KEYS_TEST_KEYSET", string(seeds.Marshal()))
	s, err := LoadKeySet(context.Background(), KeySetSpec{Source: "env:KEYS_TEST_KEYSET"}, "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := jwk.NewLocalSigner(seeds.Ed25519, seeds.MLDSA87)
	if !s.Keys().Equal(want.Keys()) {
		t.Errorf("key set from env differs from the seeds' key set")
	}
	if _, _, err := LoadOrCreateKeySet(context.Background(), KeySetSpec{Source: "env:KEYS_TEST_UNSET_XYZ"}, "", Options{}); err == nil || !strings.Contains(err.Error(), "cannot be created") {
		t.Errorf("creating into env: %v, want a refusal", err)
	}
}

func TestLoadKeySetRefusals(t *testing.T) {
	good := NewSeeds()
	b64 := func(n int) string { return strings.Repeat("A", n) }
	cases := []struct {
		name, doc string
		spec      KeySetSpec
		wantErr   string
	}{
		{"not json", secretMark, KeySetSpec{}, "not a JSON object"},
		{"secret in a string", `"` + secretMark + `"`, KeySetSpec{}, "not a JSON object"},
		{"unknown member", `{"ed25519Seed":"` + b64(43) + `","` + secretMark + `":"x"}`, KeySetSpec{}, "not a JSON object"},
		{"number", `{"ed25519Seed":1}`, KeySetSpec{}, "not a JSON object"},
		{"trailing text", string(good.Marshal()) + ` {}`, KeySetSpec{}, "text after"},
		{"bad base64", `{"ed25519Seed":"` + secretMark + `","mldsa87Seed":"` + b64(43) + `"}`, KeySetSpec{}, "ed25519Seed: not base64url"},
		{"padded", `{"ed25519Seed":"` + b64(43) + `=","mldsa87Seed":"` + b64(43) + `"}`, KeySetSpec{}, "ed25519Seed: not base64url"},
		{"short seed", `{"ed25519Seed":"` + b64(42) + `","mldsa87Seed":"` + b64(43) + `"}`, KeySetSpec{}, "ed25519Seed: 31 bytes"},
		{"missing half", `{"mldsa87Seed":"` + b64(43) + `"}`, KeySetSpec{}, "needs both"},
		{"whole document as a half", string(good.Marshal()), KeySetSpec{MLDSA: "env:X"}, "holds mldsa87Seed, but this source is only the Ed25519 half"},
		{"bare seed as a half, bad", secretMark, KeySetSpec{MLDSA: "env:X"}, "Ed25519 half env:KEYS_TEST_BAD (environment variable KEYS_TEST_BAD): not base64url"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("KEYS_TEST_BAD", c.doc)
			spec := c.spec
			spec.Source = "env:KEYS_TEST_BAD"
			_, err := LoadKeySet(context.Background(), spec, "", Options{})
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("LoadKeySet = %v, want error with %q", err, c.wantErr)
			}
			assertNoSecret(t, "error", err.Error())
			if strings.Contains(err.Error(), b64(42)) {
				t.Errorf("error quotes a seed: %v", err)
			}
		})
	}
}

func FuzzParseSeeds(f *testing.F) {
	f.Add(NewSeeds().Marshal())
	f.Add([]byte(`{"mldsa87Seed":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"ed25519Seed":null}`))
	f.Add([]byte(`[1,2]`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		s, err := ParseSeeds(doc)
		if err != nil {
			if len(doc) >= 12 && strings.Contains(err.Error(), string(doc)) {
				t.Errorf("error quotes the document: %v", err)
			}
			return
		}
		for _, seed := range [][]byte{s.Ed25519, s.MLDSA87} {
			if seed != nil && len(seed) != jwk.SeedSize {
				t.Errorf("seed of %d bytes accepted", len(seed))
			}
		}
		again, err := ParseSeeds(s.Marshal())
		if err != nil || string(again.Marshal()) != string(s.Marshal()) {
			t.Errorf("seeds do not survive Marshal: %v", err)
		}
	})
}

func TestSplitKeySet(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	spec := KeySetSpec{Source: "ed.json", MLDSA: "ml.json"}
	s, created, err := LoadOrCreateKeySet(ctx, spec, dir, Options{})
	if err != nil || !created {
		t.Fatalf("LoadOrCreateKeySet: created %t, %v", created, err)
	}
	for name, member := range map[string]string{"ed.json": "ed25519Seed", "ml.json": "mldsa87Seed"} {
		raw, _ := os.ReadFile(filepath.Join(dir, name))
		var doc map[string]string
		if err := json.Unmarshal(raw, &doc); err != nil || len(doc) != 1 || len(doc[member]) != 43 {
			t.Errorf("%s holds %q, want only %s", name, raw, member)
		}
	}
	again, created, err := LoadOrCreateKeySet(ctx, spec, dir, Options{})
	if err != nil || created || !again.Keys().Equal(s.Keys()) {
		t.Fatalf("second load: created %t, %v", created, err)
	}
	// A bare seed is accepted for a half.
	seeds := NewSeeds()
	t.Setenv("KEYS_TEST_ED", canon.B64(seeds.Ed25519))
	t.Setenv("KEYS_TEST_ML", string(Seeds{MLDSA87: seeds.MLDSA87}.Marshal()))
	bare, err := LoadKeySet(ctx, KeySetSpec{Source: "env:KEYS_TEST_ED", MLDSA: "env:KEYS_TEST_ML"}, "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := jwk.NewLocalSigner(seeds.Ed25519, seeds.MLDSA87)
	if !bare.Keys().Equal(want.Keys()) {
		t.Errorf("split key set from a bare seed differs")
	}
}

func TestTransitKeySetNeedsMLDSASource(t *testing.T) {
	vc, err := vault.New(vault.Options{Address: "http://127.0.0.1:1", Auth: vault.Auth{Token: &vault.TokenAuth{}}})
	if err != nil {
		t.Fatal(err)
	}
	defer vc.Close()
	opts := Options{Vault: vc}
	cases := []struct {
		spec    KeySetSpec
		wantErr string
	}{
		{KeySetSpec{Source: "vault-transit:k"}, "open-source Vault's Transit has no ML-DSA keys (enterprise only)"},
		{KeySetSpec{Source: "vault-transit:k", MLDSA: "vault-transit:m"}, "the ML-DSA-87 half cannot be a Vault Transit key"},
	}
	for _, c := range cases {
		if _, err := LoadKeySet(context.Background(), c.spec, "", opts); err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("LoadKeySet(%+v) = %v, want error with %q", c.spec, err, c.wantErr)
		}
	}
}

func FuzzParseHalf(f *testing.F) {
	s := NewSeeds()
	f.Add(Seeds{MLDSA87: s.MLDSA87}.Marshal(), true)
	f.Add([]byte(canon.B64(s.Ed25519)), false)
	f.Add(s.Marshal(), false)
	f.Add([]byte("{"), true)
	f.Fuzz(func(t *testing.T, doc []byte, mldsa bool) {
		alg := jwk.Ed25519
		if mldsa {
			alg = jwk.MLDSA87
		}
		seed, err := ParseHalf(doc, alg)
		if err == nil && len(seed) != jwk.SeedSize {
			t.Errorf("ParseHalf accepted a seed of %d bytes", len(seed))
		}
		if err != nil && len(doc) >= 12 && strings.Contains(err.Error(), string(doc)) {
			t.Errorf("error quotes the document: %v", err)
		}
	})
}
