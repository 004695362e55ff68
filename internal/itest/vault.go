//go:build integration

package itest

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/hashicorp/vault/api"
)

// VaultRoot returns a client with the dev server's root token.
func VaultRoot(t testing.TB) *api.Client {
	t.Helper()
	env := need(t, "VAULT_ADDR", "VAULT_TOKEN")
	cfg := api.DefaultConfig()
	cfg.Address = env["VAULT_ADDR"]
	c, err := api.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.SetToken(env["VAULT_TOKEN"])
	if _, err := c.Sys().HealthWithContext(Ctx(t)); err != nil {
		t.Fatalf("vault at %s is not reachable (%v): %s", cfg.Address, err, startServers)
	}
	return c
}

// EnableVault mounts a secrets engine (kind "kv-v2", "transit") or, with
// auth set, an auth method at path, unless something is mounted there.
func EnableVault(t testing.TB, root *api.Client, path, kind string, auth bool) {
	t.Helper()
	ctx := Ctx(t)
	var err error
	if auth {
		err = root.Sys().EnableAuthWithOptionsWithContext(ctx, path, &api.EnableAuthOptions{Type: kind})
	} else {
		opts := &api.MountInput{Type: kind}
		if kind == "kv-v2" {
			opts = &api.MountInput{Type: "kv", Options: map[string]string{"version": "2"}}
		}
		err = root.Sys().MountWithContext(ctx, path, opts)
	}
	if err != nil && !strings.Contains(err.Error(), "already in use") {
		t.Fatalf("vault: enabling %s at %s: %v", kind, path, err)
	}
}

// VaultWrite writes with the root client and fails the test on error.
func VaultWrite(t testing.TB, root *api.Client, path string, data map[string]any) *api.Secret {
	t.Helper()
	s, err := root.Logical().WriteWithContext(Ctx(t), path, data)
	if err != nil {
		t.Fatalf("vault: writing %s: %v", path, err)
	}
	return s
}

// ExecutorPolicy mounts KV v2 at secret/ and Transit at transit/ unless
// they are there, and writes the policy keys/README.md documents for the
// names that start with prefix (the KV folder secret/prefix/, the Transit
// keys prefix-*). The policy is named prefix; ExecutorPolicy returns that
// name.
func ExecutorPolicy(t testing.TB, root *api.Client, prefix string) string {
	t.Helper()
	EnableVault(t, root, "secret", "kv-v2", false)
	EnableVault(t, root, "transit", "transit", false)
	policy := fmt.Sprintf(`
path "secret/data/%[1]s/*" { capabilities = ["read", "create", "update"] }
path "transit/keys/%[1]s-*" { capabilities = ["read", "create", "update"] }
path "transit/sign/%[1]s-*" { capabilities = ["update"] }
`, prefix)
	if err := root.Sys().PutPolicyWithContext(Ctx(t), prefix, policy); err != nil {
		t.Fatal(err)
	}
	return prefix
}

// VaultToken makes a token with policy (and Vault's default policy).
func VaultToken(t testing.TB, root *api.Client, policy string) string {
	t.Helper()
	s, err := root.Auth().Token().CreateWithContext(Ctx(t), &api.TokenCreateRequest{Policies: []string{policy}})
	if err != nil {
		t.Fatal(err)
	}
	return s.Auth.ClientToken
}

// KVField reads one string field of a KV v2 secret at mount/path with the
// root client.
func KVField(t testing.TB, root *api.Client, mount, path, field string) string {
	t.Helper()
	s, err := root.KVv2(mount).Get(Ctx(t), path)
	if err != nil {
		t.Fatalf("vault: reading %s/%s: %v", mount, path, err)
	}
	f, ok := s.Data[field].(string)
	if !ok {
		t.Fatalf("vault: %s/%s has no string field %s", mount, path, field)
	}
	return f
}

// AppRole makes an AppRole role with policy and token_ttl/token_max_ttl
// (seconds; 0 = Vault's default) and writes its role id and a secret id
// to files in dir. It returns the two file paths.
func AppRole(t testing.TB, root *api.Client, mount, role, policy string, ttl, maxTTL int, dir string) (roleIDFile, secretIDFile string) {
	t.Helper()
	EnableVault(t, root, mount, "approle", true)
	data := map[string]any{"token_policies": policy}
	if ttl > 0 {
		data["token_ttl"] = ttl
	}
	if maxTTL > 0 {
		data["token_max_ttl"] = maxTTL
	}
	VaultWrite(t, root, "auth/"+mount+"/role/"+role, data)
	rid, err := root.Logical().ReadWithContext(Ctx(t), "auth/"+mount+"/role/"+role+"/role-id")
	if err != nil {
		t.Fatal(err)
	}
	sid := VaultWrite(t, root, "auth/"+mount+"/role/"+role+"/secret-id", nil)
	roleIDFile = WriteSecretFile(t, dir, role+".role-id", dataString(t, rid, "role_id"))
	secretIDFile = WriteSecretFile(t, dir, role+".secret-id", dataString(t, sid, "secret_id"))
	return roleIDFile, secretIDFile
}

// KubernetesAuth enables Vault's Kubernetes auth at mount as keys/README.md
// says: the test cluster's address and CA, and the token of a reviewer (the
// service account vault-auth of ns) bound to system:auth-delegator. The
// caller writes the roles.
func KubernetesAuth(t testing.TB, root *api.Client, k *Kube, mount, ns string) {
	t.Helper()
	reviewer := k.ServiceAccountToken(t, ns, "vault-auth")
	k.AuthDelegator(t, ns, "vault-auth")
	ca, err := os.ReadFile(k.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	EnableVault(t, root, mount, "kubernetes", true)
	VaultWrite(t, root, "auth/"+mount+"/config", map[string]any{
		"kubernetes_host": k.Server, "kubernetes_ca_cert": string(ca), "token_reviewer_jwt": reviewer,
	})
}

// dataString returns the text field key of a Vault answer's data, failing the test when it is not there.
func dataString(t testing.TB, s *api.Secret, key string) string {
	t.Helper()
	if s == nil {
		t.Fatalf("vault answered nothing where %s was expected", key)
	}
	v, ok := s.Data[key].(string)
	if !ok {
		t.Fatalf("vault's answer has no text field %s: %v", key, s.Data)
	}
	return v
}
