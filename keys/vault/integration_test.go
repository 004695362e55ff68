//go:build integration

package vault

import (
	"crypto/ed25519"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/vault/api"
	"github.com/seed-6e06167c/mcp-executor/internal/itest"
	"github.com/seed-6e06167c/mcp-executor/internal/syncbuf"
)

// The tests below run against a real Vault dev server (and, for
// Kubernetes auth, the real kube-apiserver). Each uses fresh names.

type vaultEnv struct {
	root   *api.Client
	prefix string // KV path prefix and Transit key prefix this test's policy allows
	policy string
	dir    string
}

func newVaultEnv(t *testing.T) *vaultEnv {
	root := itest.VaultRoot(t)
	e := &vaultEnv{root: root, prefix: itest.Name("keys-it-"), dir: t.TempDir()}
	// The policy keys/README.md documents, for this test's names.
	e.policy = itest.ExecutorPolicy(t, root, e.prefix)
	return e
}

// tokenClient returns a client using a fresh token with the test policy.
func (e *vaultEnv) tokenClient(t *testing.T) *Client {
	t.Helper()
	f := itest.WriteSecretFile(t, e.dir, itest.Name("token-"), itest.VaultToken(t, e.root, e.policy))
	return e.client(t, Auth{Token: &TokenAuth{File: f}}, nil)
}

func (e *vaultEnv) client(t *testing.T, auth Auth, log *slog.Logger) *Client {
	t.Helper()
	c, err := New(Options{Address: os.Getenv("VAULT_ADDR"), Auth: auth, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func TestKVReadCreate(t *testing.T) {
	e := newVaultEnv(t)
	c := e.tokenClient(t)
	ctx := itest.Ctx(t)
	path := e.prefix + "/executor"
	if _, err := c.ReadKVField(ctx, "secret", path, "copyKey"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing secret: %v, want fs.ErrNotExist", err)
	}
	if err := c.CreateKVField(ctx, "secret", path, "copyKey", []byte("v1")); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateKVField(ctx, "secret", path, "keys", []byte(`{"a":"b"}`)); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateKVField(ctx, "secret", path, "copyKey", []byte("v2")); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second create: %v, want fs.ErrExist", err)
	}
	for field, want := range map[string]string{"copyKey": "v1", "keys": `{"a":"b"}`} {
		got, err := c.ReadKVField(ctx, "secret", path, field)
		if err != nil || string(got) != want {
			t.Errorf("field %s = %q, %v; want %q", field, got, err, want)
		}
	}
	if _, err := c.ReadKVField(ctx, "secret", path, "absent"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing field: %v, want fs.ErrNotExist", err)
	}
}

// TestRefusalNamesPathAndAuth: a path outside the policy gives a clear
// error, and a live token refused by policy is not taken for a revoked one
// (no new login).
func TestRefusalNamesPathAndAuth(t *testing.T) {
	e := newVaultEnv(t)
	c := e.tokenClient(t)
	_, err := c.ReadKVField(itest.Ctx(t), "secret", "elsewhere/x", "f")
	if !errors.Is(err, ErrPermissionDenied) {
		t.Fatalf("read outside the policy: %v, want ErrPermissionDenied", err)
	}
	for _, want := range []string{"secret/data/elsewhere/x", "token auth (file ", "permission denied", os.Getenv("VAULT_ADDR")} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if st := c.Status(); st.Logins != 1 {
		t.Errorf("logins = %d, want 1 (a policy refusal is not a dead token)", st.Logins)
	}
	if strings.Contains(err.Error(), c.api.Token()) {
		t.Errorf("the error holds the token")
	}
}

func TestTransitSign(t *testing.T) {
	e := newVaultEnv(t)
	c := e.tokenClient(t)
	ctx := itest.Ctx(t)
	name := e.prefix + "-executor"
	if _, err := c.ReadTransitKey(ctx, "transit", name); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing key: %v, want fs.ErrNotExist", err)
	}
	if err := c.CreateTransitKey(ctx, "transit", name); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTransitKey(ctx, "transit", name); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second create: %v, want fs.ErrExist", err)
	}
	k, err := c.ReadTransitKey(ctx, "transit", name)
	if err != nil {
		t.Fatal(err)
	}
	if k.Version != 1 || len(k.Public) != ed25519.PublicKeySize || k.Exportable {
		t.Errorf("key = %+v", k)
	}
	msg := []byte("eyJhbGciOiJFZERTQSJ9.cGF5bG9hZA")
	sig, err := c.TransitSign(ctx, "transit", name, k.Version, msg)
	if err != nil {
		t.Fatal(err)
	}
	if !ed25519.Verify(k.Public, msg, sig) {
		t.Errorf("Transit signature does not verify")
	}
	// Another type of key is refused with the reason.
	other := e.prefix + "-rsa"
	itest.VaultWrite(t, e.root, "transit/keys/"+other, map[string]any{"type": "rsa-2048"})
	if _, err := c.ReadTransitKey(ctx, "transit", other); err == nil || !strings.Contains(err.Error(), "want ed25519") {
		t.Errorf("rsa key: %v", err)
	}
	// Open-source Vault has no ML-DSA: the fact the design rests on.
	_, err = e.root.Logical().WriteWithContext(ctx, "transit/keys/"+e.prefix+"-mldsa", map[string]any{"type": "ml-dsa", "parameter_set": "87"})
	if err == nil || !strings.Contains(err.Error(), "only available in enterprise") {
		t.Errorf("ML-DSA Transit key: %v; if this Vault makes them, the ML-DSA-87 half could move into Transit", err)
	}
}

// TestRevokedTokenRecovered: a token revoked behind the client's back is
// replaced by a fresh AppRole login on the next call.
func TestRevokedTokenRecovered(t *testing.T) {
	e := newVaultEnv(t)
	rid, sid := itest.AppRole(t, e.root, "approle", itest.Name("executor-"), e.policy, 0, 0, e.dir)
	logs := &syncbuf.Buffer{}
	c := e.client(t, Auth{AppRole: &AppRoleAuth{RoleIDFile: rid, SecretIDFile: sid}}, slog.New(slog.NewJSONHandler(logs, nil)))
	ctx := itest.Ctx(t)
	path := e.prefix + "/agent"
	if err := c.CreateKVField(ctx, "secret", path, "f", []byte("v")); err != nil {
		t.Fatal(err)
	}
	old := c.api.Token()
	if err := e.root.Auth().Token().RevokeOrphanWithContext(ctx, old); err != nil {
		t.Fatal(err)
	}
	got, err := c.ReadKVField(ctx, "secret", path, "f")
	if err != nil || string(got) != "v" {
		t.Fatalf("read after revocation: %q, %v", got, err)
	}
	if st := c.Status(); st.Logins != 2 || c.api.Token() == old {
		t.Errorf("status after revocation = %+v, want a second login", st)
	}
	for _, secret := range []string{old, c.api.Token(), readFile(t, sid), readFile(t, rid)} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("the log holds a token or an id")
		}
	}
}

// TestTokenRenewedAndReplaced: a short-lived renewable token is renewed in
// the background; one that reaches its max TTL is replaced by a new login.
func TestTokenRenewedAndReplaced(t *testing.T) {
	e := newVaultEnv(t)
	cases := []struct {
		name        string
		ttl, maxTTL int
		check       func(Status) bool
	}{
		{"renewed", 3, 3600, func(s Status) bool { return s.Renewals >= 1 && s.Logins == 1 }},
		{"re-login at max ttl", 2, 3, func(s Status) bool { return s.Logins >= 2 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rid, sid := itest.AppRole(t, e.root, "approle", itest.Name("short-"), e.policy, tc.ttl, tc.maxTTL, t.TempDir())
			c := e.client(t, Auth{AppRole: &AppRoleAuth{RoleIDFile: rid, SecretIDFile: sid}}, nil)
			ctx := itest.Ctx(t)
			if err := c.Login(ctx); err != nil {
				t.Fatal(err)
			}
			first := c.api.Token()
			deadline := time.Now().Add(10 * time.Second)
			for !tc.check(c.Status()) && time.Now().Before(deadline) {
				time.Sleep(200 * time.Millisecond)
			}
			if st := c.Status(); !tc.check(st) {
				t.Fatalf("status = %+v", st)
			}
			// The token the client holds now is live, without a re-login on refusal.
			logins := c.Status().Logins
			if _, err := c.ReadKVField(ctx, "secret", e.prefix+"/none", "f"); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("read: %v", err)
			}
			if c.Status().Logins != logins {
				t.Errorf("the kept-alive token was refused (token %t)", first == c.api.Token())
			}
		})
	}
}

// TestKubernetesAuth: Vault's kubernetes auth against the real
// kube-apiserver (TokenReview by a reviewer bound to system:auth-delegator),
// logging in with a service account's token from a file, as in a pod.
func TestKubernetesAuth(t *testing.T) {
	e := newVaultEnv(t)
	k := itest.KubeAdmin(t)
	ctx := itest.Ctx(t)
	ns := k.Namespace(t, "keys-vault-")
	mount := itest.Name("kubernetes-")
	itest.KubernetesAuth(t, e.root, k, mount, ns)
	executorJWT := k.ServiceAccountToken(t, ns, "mcp-executor")
	itest.VaultWrite(t, e.root, "auth/"+mount+"/role/mcp-executor", map[string]any{
		"bound_service_account_names": "mcp-executor", "bound_service_account_namespaces": ns,
		"token_policies": e.policy, "token_ttl": "1h",
	})
	if _, err := e.root.Logical().WriteWithContext(ctx, "secret/data/"+e.prefix+"/k8s", map[string]any{"data": map[string]any{"copyKey": "from-vault"}}); err != nil {
		t.Fatal(err)
	}
	tokenFile := itest.WriteSecretFile(t, e.dir, "sa-token", executorJWT)

	c := e.client(t, Auth{Kubernetes: &KubernetesAuth{Role: "mcp-executor", Mount: mount, TokenFile: tokenFile}}, nil)
	got, err := c.ReadKVField(ctx, "secret", e.prefix+"/k8s", "copyKey")
	if err != nil || string(got) != "from-vault" {
		t.Fatalf("read with kubernetes auth: %q, %v", got, err)
	}
	if st := c.Status(); !st.LoggedIn || !strings.Contains(st.Auth, "kubernetes auth (mount "+mount+", role mcp-executor") {
		t.Errorf("status = %+v", st)
	}
	// Revoked: recovered by logging in again with the (re-read) token file.
	if err := e.root.Auth().Token().RevokeOrphanWithContext(ctx, c.api.Token()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReadKVField(ctx, "secret", e.prefix+"/k8s", "copyKey"); err != nil || c.Status().Logins != 2 {
		t.Fatalf("after revocation: %v, logins %d", err, c.Status().Logins)
	}

	// A service account the role does not bind is refused, and the error
	// says which login failed.
	wrongFile := itest.WriteSecretFile(t, e.dir, "other-token", k.ServiceAccountToken(t, ns, "someone-else"))
	bad := e.client(t, Auth{Kubernetes: &KubernetesAuth{Role: "mcp-executor", Mount: mount, TokenFile: wrongFile}}, nil)
	_, err = bad.ReadKVField(ctx, "secret", e.prefix+"/k8s", "copyKey")
	if err == nil || !strings.Contains(err.Error(), "logging in auth/"+mount+"/login with kubernetes auth") {
		t.Fatalf("login with an unbound service account: %v", err)
	}
	if strings.Contains(err.Error(), executorJWT[:20]) {
		t.Errorf("the error holds the token")
	}
}

func readFile(t *testing.T, p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// TestTokenFromEnvironment: token auth without a file takes VAULT_TOKEN;
// once that token is revoked, the error says the token itself is refused.
func TestTokenFromEnvironment(t *testing.T) {
	e := newVaultEnv(t)
	ctx := itest.Ctx(t)
	token := itest.VaultToken(t, e.root, e.policy)
	t.Setenv("VAULT_TOKEN", token)
	c := e.client(t, Auth{Token: &TokenAuth{}}, nil)
	if _, err := c.ReadKVField(ctx, "secret", e.prefix+"/none", "f"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("read with VAULT_TOKEN: %v", err)
	}
	if err := e.root.Auth().Token().RevokeOrphanWithContext(ctx, token); err != nil {
		t.Fatal(err)
	}
	_, err := c.ReadKVField(ctx, "secret", e.prefix+"/none", "f")
	if !errors.Is(err, ErrPermissionDenied) || !strings.Contains(err.Error(), "logging in auth/token/lookup-self with token auth (VAULT_TOKEN)") {
		t.Fatalf("read with a revoked VAULT_TOKEN: %v", err)
	}
	if strings.Contains(err.Error(), token) {
		t.Errorf("the error holds the token")
	}
}
