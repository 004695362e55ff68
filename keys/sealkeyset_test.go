package keys

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/seal"
)

// sealOnce makes one seal key set signer per test binary (SLH-DSA key
// making is slow).
var (
	sealSeedsOnce sync.Once
	sealSeedsVal  SealSeeds
)

func fixedSealSeeds() SealSeeds {
	sealSeedsOnce.Do(func() {
		sealSeedsVal = SealSeeds{Ed25519: bytes.Repeat([]byte{1}, 32), MLDSA87: bytes.Repeat([]byte{2}, 32), SLHDSA: bytes.Repeat([]byte{3}, 96)}
	})
	return sealSeedsVal
}

func TestSealKeySetFile(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	opts, logs := testOptions(t)
	spec := "state/seal.keys.json"
	if _, err := LoadSealKeySet(ctx, spec, dir, opts); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a missing file: %v, want fs.ErrNotExist", err)
	}
	s1, created, err := LoadOrCreateSealKeySet(ctx, spec, dir, opts)
	if err != nil || !created {
		t.Fatalf("LoadOrCreateSealKeySet: created %t, %v", created, err)
	}
	p := filepath.Join(dir, spec)
	info, _ := os.Stat(p)
	if info.Mode().Perm() != 0o600 {
		t.Errorf("seal key file mode %v, want 0600", info.Mode().Perm())
	}
	raw, _ := os.ReadFile(p)
	var doc map[string]string
	if err := json.Unmarshal(raw, &doc); err != nil || len(doc) != 3 || len(doc["ed25519Seed"]) != 43 || len(doc["mldsa87Seed"]) != 43 || len(doc["slhdsaSeed"]) != 128 {
		t.Errorf("seal key file: want {ed25519Seed, mldsa87Seed, slhdsaSeed} (%v)", err)
	}
	s2, created, err := LoadOrCreateSealKeySet(ctx, spec, dir, opts)
	if err != nil || created {
		t.Fatalf("loaded again: created %t, %v", created, err)
	}
	if !s1.Keys().Equal(s2.Keys()) || SealKeysFingerprint(s1) != s2.Keys().Fingerprint() {
		t.Fatal("the seal keys changed between loads")
	}
	for _, v := range doc {
		if strings.Contains(logs.String(), v) {
			t.Errorf("a seed is in the log")
		}
	}
}

func TestSealKeySetEnvAndRefusals(t *testing.T) {
	seeds := fixedSealSeeds()
	t.Setenv("KEYS_TEST_SEALKEYS", string(seeds.Marshal()))
	s, err := LoadSealKeySet(context.Background(), "env:KEYS_TEST_SEALKEYS", "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := seal.NewLocalSigner(seeds.Ed25519, seeds.MLDSA87, seeds.SLHDSA)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Keys().Equal(want.Keys()) {
		t.Fatal("the seal keys from env differ from the seeds' keys")
	}
	sig, err := s.Sign(context.Background(), jwk.Ed25519, []byte("x"))
	if err != nil || !want.Keys().Ed25519.Verify([]byte("x"), sig) {
		t.Fatalf("signing: %v", err)
	}
	b64 := func(n int) string { return strings.Repeat("A", n) }
	for name, tc := range map[string]struct{ doc, want string }{
		"not json":          {secretMark, "not a JSON object"},
		"an agent key set":  {string(NewSeeds().Marshal()), "needs ed25519Seed, mldsa87Seed and slhdsaSeed"},
		"an unknown member": {`{"ed25519Seed":"` + b64(43) + `","mldsa87Seed":"` + b64(43) + `","slhdsaSeed":"` + b64(128) + `","` + secretMark + `":"x"}`, "not a JSON object"},
		"a short SLH seed":  {`{"ed25519Seed":"` + b64(43) + `","mldsa87Seed":"` + b64(43) + `","slhdsaSeed":"` + b64(43) + `"}`, "slhdsaSeed: 32 bytes, want 96"},
		"bad base64":        {`{"ed25519Seed":"` + b64(43) + `","mldsa87Seed":"` + b64(43) + `","slhdsaSeed":"` + secretMark + `"}`, "slhdsaSeed: not base64url"},
		"trailing text":     {string(seeds.Marshal()) + "{}", "text after"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("KEYS_TEST_BADSEAL", tc.doc)
			_, err := LoadSealKeySet(context.Background(), "env:KEYS_TEST_BADSEAL", "", Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v, want %q", err, tc.want)
			}
			assertNoSecret(t, "error", err.Error())
		})
	}
	if _, err := LoadSealKeySet(context.Background(), "vault-transit:recorder", "", Options{}); err == nil || !strings.Contains(err.Error(), "no ML-DSA or SLH-DSA key type") {
		t.Errorf("a Transit key: %v", err)
	}
	if _, _, err := LoadOrCreateSealKeySet(context.Background(), "env:KEYS_TEST_UNSET_SEAL", "", Options{}); err == nil {
		t.Error("created into env")
	}
}
