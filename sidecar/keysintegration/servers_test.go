//go:build integration

package keysintegration_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/vault/api"
	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// The set-up below mirrors keys/internal/itest, which a package outside keys
// cannot import.

const startServers = `start the test servers first: eval "$(../shared/tools/vault-dev.sh start)" and eval "$(../shared/tools/kube-test-cluster.sh start)" (from the checkout's parent folder)`

// fresh returns prefix and 8 random hex characters, so that runs against
// long-lived servers never meet.
func fresh(prefix string) string {
	b := make([]byte, 4)
	rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

func ctxFor(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func needEnv(t testing.TB, names ...string) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, n := range names {
		v := os.Getenv(n)
		if v == "" {
			t.Fatalf("%s is not set: %s", n, startServers)
		}
		env[n] = v
	}
	return env
}

// vaultServer is the Vault dev server seen with its root token, and the
// policy this test's executor gets.
type vaultServer struct {
	addr   string
	root   *api.Client
	prefix string // KV folder and Transit key prefix the policy allows
	policy string
}

// newVault connects to the dev server, mounts KV v2 at secret/ and Transit
// at transit/ if they are not there, and writes the policy keys/README.md
// documents for fresh names.
func newVault(t testing.TB) *vaultServer {
	t.Helper()
	env := needEnv(t, "VAULT_ADDR", "VAULT_TOKEN")
	cfg := api.DefaultConfig()
	cfg.Address = env["VAULT_ADDR"]
	cfg.MaxRetries = 0 // a refusal (Transit backup answers 500) or a server that is down is seen at once
	root, err := api.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	root.SetToken(env["VAULT_TOKEN"])
	if _, err := root.Sys().HealthWithContext(ctxFor(t)); err != nil {
		t.Fatalf("Vault at %s is not reachable (%v): %s", cfg.Address, err, startServers)
	}
	v := &vaultServer{addr: cfg.Address, root: root, prefix: fresh("keysit-")}
	v.mount(t, "secret", "kv-v2", false)
	v.mount(t, "transit", "transit", false)
	v.policy = v.prefix
	policy := fmt.Sprintf(`
path "secret/data/%[1]s/*" { capabilities = ["read", "create", "update"] }
path "transit/keys/%[1]s-*" { capabilities = ["read", "create", "update"] }
path "transit/sign/%[1]s-*" { capabilities = ["update"] }
`, v.prefix)
	if err := root.Sys().PutPolicyWithContext(ctxFor(t), v.policy, policy); err != nil {
		t.Fatal(err)
	}
	return v
}

func (v *vaultServer) mount(t testing.TB, path, kind string, auth bool) {
	t.Helper()
	var err error
	if auth {
		err = v.root.Sys().EnableAuthWithOptionsWithContext(ctxFor(t), path, &api.EnableAuthOptions{Type: kind})
	} else {
		in := &api.MountInput{Type: kind}
		if kind == "kv-v2" {
			in = &api.MountInput{Type: "kv", Options: map[string]string{"version": "2"}}
		}
		err = v.root.Sys().MountWithContext(ctxFor(t), path, in)
	}
	if err != nil && !strings.Contains(err.Error(), "already in use") {
		t.Fatalf("vault: enabling %s at %s: %v", kind, path, err)
	}
}

func (v *vaultServer) write(t testing.TB, path string, data map[string]any) *api.Secret {
	t.Helper()
	s, err := v.root.Logical().WriteWithContext(ctxFor(t), path, data)
	if err != nil {
		t.Fatalf("vault: writing %s: %v", path, err)
	}
	return s
}

// token makes a token with the test's policy (and Vault's default policy).
func (v *vaultServer) token(t testing.TB) string {
	t.Helper()
	s, err := v.root.Auth().Token().CreateWithContext(ctxFor(t), &api.TokenCreateRequest{Policies: []string{v.policy}})
	if err != nil {
		t.Fatal(err)
	}
	return s.Auth.ClientToken
}

// kvField reads one field of a KV v2 secret with the root token.
func (v *vaultServer) kvField(t testing.TB, path, field string) string {
	t.Helper()
	s, err := v.root.KVv2("secret").Get(ctxFor(t), path)
	if err != nil {
		t.Fatalf("vault: reading secret/%s: %v", path, err)
	}
	f, ok := s.Data[field].(string)
	if !ok {
		t.Fatalf("vault: secret/%s has no string field %s", path, field)
	}
	return f
}

// kube is the test cluster seen by its admin.
type kube struct {
	server, caFile string
	admin          kubernetes.Interface
}

func newKube(t testing.TB) *kube {
	t.Helper()
	env := needEnv(t, "KUBE_API_SERVER", "KUBE_ADMIN_TOKEN", "KUBE_CA_FILE")
	cfg := &rest.Config{Host: env["KUBE_API_SERVER"], BearerToken: env["KUBE_ADMIN_TOKEN"], TLSClientConfig: rest.TLSClientConfig{CAFile: env["KUBE_CA_FILE"]}}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.Discovery().ServerVersion(); err != nil {
		t.Fatalf("kube-apiserver at %s is not reachable (%v): %s", cfg.Host, err, startServers)
	}
	return &kube{server: cfg.Host, caFile: env["KUBE_CA_FILE"], admin: cs}
}

// namespace makes a fresh namespace (left behind: the test cluster has no
// controller to finish deleting it).
func (k *kube) namespace(t testing.TB) string {
	t.Helper()
	ns := fresh("keysit-")
	if _, err := k.admin.CoreV1().Namespaces().Create(ctxFor(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return ns
}

// serviceAccountToken makes the service account if needed and a token for
// it by TokenRequest (as a projected volume would), for the audiences given
// (none: the API server's own).
func (k *kube) serviceAccountToken(t testing.TB, ns, sa string, audiences ...string) string {
	t.Helper()
	ctx := ctxFor(t)
	_, err := k.admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{})
	if err != nil && !strings.Contains(err.Error(), "already exists") {
		t.Fatal(err)
	}
	secs := int64(3600)
	tr, err := k.admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authv1.TokenRequest{Spec: authv1.TokenRequestSpec{ExpirationSeconds: &secs, Audiences: audiences}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token for %s/%s: %v", ns, sa, err)
	}
	return tr.Status.Token
}

func (k *kube) secret(t testing.TB, ns, name string, data map[string]string) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, StringData: data}
	if _, err := k.admin.CoreV1().Secrets(ns).Create(ctxFor(t), s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// grantGetSecrets makes the Role keys/README.md documents: get on the named
// Secrets alone, bound to the service account.
func (k *kube) grantGetSecrets(t testing.TB, ns, sa string, names ...string) {
	t.Helper()
	ctx := ctxFor(t)
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "mcp-executor-secrets", Namespace: ns},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}, ResourceNames: names}},
	}
	if _, err := k.admin.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "mcp-executor-secrets", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: ns}},
	}
	if _, err := k.admin.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// authDelegator binds a service account to system:auth-delegator, as Vault's
// token reviewer needs.
func (k *kube) authDelegator(t testing.TB, ns, sa string) {
	t.Helper()
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: fresh("keysit-token-review-")},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "system:auth-delegator"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: ns}},
	}
	if _, err := k.admin.RbacV1().ClusterRoleBindings().Create(ctxFor(t), crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = k.admin.RbacV1().ClusterRoleBindings().Delete(context.Background(), crb.Name, metav1.DeleteOptions{})
	})
}

// kubeconfig writes a kubeconfig (mode 0600) whose current context uses
// token.
func (k *kube) kubeconfig(t testing.TB, dir, token string) string {
	t.Helper()
	text := fmt.Sprintf(`apiVersion: v1
kind: Config
current-context: executor
clusters:
- name: test
  cluster:
    server: %s
    certificate-authority: %s
contexts:
- name: executor
  context: {cluster: test, user: executor}
users:
- name: executor
  user:
    token: %s
`, k.server, k.caFile, token)
	p := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func readText(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
