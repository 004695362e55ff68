//go:build integration

package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/vault/api"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/keys"
	"github.com/seed-6e06167c/mcp-executor/keys/vault"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
)

// TestKeysAndCheckWithVault keeps the executor's key set in the real Vault dev server of scripts/testenv
// (VAULT_ADDR and VAULT_TOKEN from `vault.sh start`): its Ed25519 half in Transit, its ML-DSA-87
// half in KV, and a server credential in KV. keys makes the key set in Vault; with a slip naming it,
// check is all well and says each Vault source was reached by token auth, and prints no credential.
func TestKeysAndCheckWithVault(t *testing.T) {
	addr, token := os.Getenv("VAULT_ADDR"), os.Getenv("VAULT_TOKEN")
	if addr == "" || token == "" {
		t.Fatal(`VAULT_ADDR and VAULT_TOKEN are not set: start the test servers first: eval "$(./scripts/testenv/servers.sh start)" in the repository's folder (it builds them once)`)
	}
	root, err := api.NewClient(api.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := root.Sys().Mount("transit", &api.MountInput{Type: "transit"}); err != nil && !strings.Contains(err.Error(), "path is already in use") {
		t.Fatal(err)
	}
	prefix := "cli-" + strings.NewReplacer("_", "x", "-", "y").Replace(canon.NewID()[:8])
	ctx := context.Background()
	if _, err := root.KVv2("secret").Put(ctx, prefix+"/app", map[string]any{"token": secretValue}); err != nil {
		t.Fatal(err)
	}

	e := folder(t, nil)
	tokenFile := filepath.Join(e.Dir, "vault-token")
	if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	execKeys := map[string]any{"ed25519": "vault-transit:" + prefix + "-exec", "mldsa87": "vault:secret/" + prefix + "/exec#mldsa"}
	settingsEdit(t, e.SettingsPath, func(s map[string]any) {
		s["vault"] = map[string]any{"address": addr, "auth": map[string]any{"token": map[string]any{"file": "vault-token"}}}
		s["executor"].(map[string]any)["keys"] = execKeys
		s["server"].(map[string]any)["env"].(map[string]any)["VAULT_CRED"] = "vault:secret/" + prefix + "/app#token"
	})

	code, out, errOut := run(t, "keys", "--config", e.SettingsPath, "--json")
	if code != ExitOK {
		t.Fatalf("keys: exit %d\n%s\n%s", code, out, errOut)
	}
	// The person signs a permission naming the executor keys now in Vault.
	vc, err := vault.New(vault.Options{Address: addr, Auth: vault.Auth{Token: &vault.TokenAuth{File: tokenFile}}})
	if err != nil {
		t.Fatal(err)
	}
	defer vc.Close()
	spec := keys.KeySetSpec{Source: execKeys["ed25519"].(string), MLDSA: execKeys["mldsa87"].(string)}
	if e.Executor, err = keys.LoadKeySet(ctx, spec, e.Dir, keys.Options{Vault: vc}); err != nil {
		t.Fatal(err)
	}
	if _, err := devsetup.WriteSlip(e, devsetup.Options{Tools: map[string]devsetup.Tool{"echo": {Action: "provared.data.read"}}}, "executor"); err != nil {
		t.Fatal(err)
	}

	code, out, errOut = run(t, "check", "--config", e.SettingsPath)
	if code != ExitOK {
		t.Fatalf("check: exit %d\n%s\n%s", code, out, errOut)
	}
	ok := itemLines(out, "ok")
	for _, want := range [][]string{
		{"vault (" + addr + ")", "logged in by token auth"},
		{"executor keys (executor.keys.ed25519)", "reached by token auth", "present", "ML-DSA-87 half comes from a secret"},
		{"executor keys (executor.keys.mldsa87)", "reached by token auth", "present"},
		{"executor keys (executor.keys)", "signs in Vault Transit"},
		{"credential VAULT_CRED", "reached by token auth", "present"},
		{"slip", `with entry "executor" holds the executor keys`},
	} {
		if !has(ok, want...) {
			t.Errorf("no ok line with %q:\n%s", want, out)
		}
	}
}
