//go:build integration

package keys

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/internal/itest"
	"github.com/seed-6e06167c/mcp-executor/keys/vault"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
)

// vaultOptions sets up a Vault dev server for one test: kv-v2 at secret/,
// transit at transit/, a policy as keys/README.md documents, and a client
// logged in with a token of that policy. It returns the options and the
// name prefix the policy allows.
func vaultOptions(t testing.TB) (Options, string) {
	root := itest.VaultRoot(t)
	prefix := itest.Name("keys-")
	policy := itest.ExecutorPolicy(t, root, prefix)
	f := itest.WriteSecretFile(t, t.TempDir(), "token", itest.VaultToken(t, root, policy))
	vc, err := vault.New(vault.Options{Address: os.Getenv("VAULT_ADDR"), Auth: vault.Auth{Token: &vault.TokenAuth{File: f}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(vc.Close)
	return Options{Vault: vc}, prefix
}

// TestTransitKeySet: a key set whose Ed25519 half is a Transit key and whose
// ML-DSA-87 half is a seed in KV, made on first use; both signatures verify
// with the jwk keys.
func TestTransitKeySet(t *testing.T) {
	opts, prefix := vaultOptions(t)
	ctx := itest.Ctx(t)
	spec := KeySetSpec{Source: "vault-transit:" + prefix + "-executor", MLDSA: "vault:secret/" + prefix + "/executor#mldsa"}
	if _, err := LoadKeySet(ctx, spec, "", opts); err == nil {
		t.Fatalf("LoadKeySet of a missing Transit key succeeded")
	}
	s, created, err := LoadOrCreateKeySet(ctx, spec, "", opts)
	if err != nil || !created {
		t.Fatalf("LoadOrCreateKeySet: created %t, %v", created, err)
	}
	ts, ok := s.(*TransitSigner)
	if !ok || ts.TransitKey().Exportable {
		t.Fatalf("signer %T, want a non-exportable *TransitSigner", s)
	}
	input := []byte("eyJhbGciOiJFZDI1NTE5In0.eyJ4IjoxfQ")
	for _, alg := range jwk.KeySetAlgs {
		sig, err := s.Sign(ctx, alg, input)
		if err != nil || !s.Keys().Key(alg).Verify(input, sig) {
			t.Errorf("%s signature from the Transit key set does not verify with jwk (%v)", alg, err)
		}
	}
	again, created, err := LoadOrCreateKeySet(ctx, spec, "", opts)
	if err != nil || created || !again.Keys().Equal(s.Keys()) {
		t.Errorf("second load: created %t, same keys %t, %v", created, err == nil && again.Keys().Equal(s.Keys()), err)
	}
	st := CheckKeySet(ctx, spec, "", opts)
	if st.Err != nil || !st.Transit || st.Fingerprint != s.Keys().Fingerprint() || len(st.Sources) != 2 ||
		!strings.Contains(st.Sources[0].Note, "no ML-DSA") || !strings.HasPrefix(st.Sources[0].Auth, "token auth (file ") {
		t.Errorf("CheckKeySet = %+v", st)
	}
	if _, err := LoadKeySet(ctx, KeySetSpec{Source: spec.Source}, "", opts); err == nil || !strings.Contains(err.Error(), "enterprise only") {
		t.Errorf("Transit key set without an ML-DSA source: %v", err)
	}
	if _, err := ResolveEnv(ctx, map[string]string{"X": spec.Source}, "", opts); err == nil {
		t.Errorf("a Transit key was read as a credential")
	}
}

// TestVaultKVKeySetAndCopyKey: both kinds of secret made in and read from
// KV fields; a path outside the policy is refused with a clear error.
func TestVaultKVKeySetAndCopyKey(t *testing.T) {
	opts, prefix := vaultOptions(t)
	ctx := itest.Ctx(t)
	spec := KeySetSpec{Source: "vault:secret/" + prefix + "/agent#keys"}
	s, created, err := LoadOrCreateKeySet(ctx, spec, "", opts)
	if err != nil || !created {
		t.Fatalf("LoadOrCreateKeySet: created %t, %v", created, err)
	}
	again, err := LoadKeySet(ctx, spec, "", opts)
	if err != nil || !again.Keys().Equal(s.Keys()) {
		t.Fatalf("LoadKeySet: %v", err)
	}
	k1, created, err := LoadOrCreateCopyKey(ctx, "vault:secret/"+prefix+"/agent#copyKey", "", opts)
	if err != nil || !created {
		t.Fatalf("LoadOrCreateCopyKey: %v", err)
	}
	k2, err := LoadCopyKey(ctx, "vault:secret/"+prefix+"/agent#copyKey", "", opts)
	if err != nil || string(k1) != string(k2) {
		t.Fatalf("LoadCopyKey: %v", err)
	}
	_, err = LoadCopyKey(ctx, "vault:secret/other/agent#copyKey", "", opts)
	if !errors.Is(err, vault.ErrPermissionDenied) || !strings.Contains(err.Error(), "secret/data/other/agent") {
		t.Errorf("outside the policy: %v", err)
	}
	st := CheckSource(ctx, "vault:secret/other/agent#copyKey", "", opts)
	if !st.Reached || st.Present {
		t.Errorf("CheckSource outside the policy = %+v", st)
	}
}

// BenchmarkSign compares one Ed25519 signature made by Vault Transit (an
// HTTP round trip to a local dev server) with one made in process.
func BenchmarkSign(b *testing.B) {
	opts, prefix := vaultOptions(b)
	ctx := context.Background()
	transit, _, err := LoadOrCreateKeySet(ctx, KeySetSpec{Source: "vault-transit:" + prefix + "-bench", MLDSA: "vault:secret/" + prefix + "/bench#mldsa"}, "", opts)
	if err != nil {
		b.Fatal(err)
	}
	seeds := NewSeeds()
	local, err := jwk.NewLocalSigner(seeds.Ed25519, seeds.MLDSA87)
	if err != nil {
		b.Fatal(err)
	}
	input := []byte("eyJhbGciOiJFZDI1NTE5In0.eyJ4IjoxfQ")
	for _, c := range []struct {
		name string
		s    jwk.Signer
	}{{"transit-ed25519", transit}, {"local-ed25519", local}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := c.s.Sign(ctx, jwk.Ed25519, input); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
