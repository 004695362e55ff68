//go:build integration

// Package itest sets up the real servers the integration tests of keys use:
// a Vault dev server (../shared/tools/vault-dev.sh) and a kube-apiserver
// with etcd (../shared/tools/kube-test-cluster.sh). A test that needs a
// server which is not reachable fails; it does not skip.
package itest

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

// Name returns prefix and 8 random hex characters: every run uses fresh
// names, so runs against a long-lived server do not meet.
func Name(prefix string) string {
	b := make([]byte, 4)
	rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

func need(t testing.TB, names ...string) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, n := range names {
		v := os.Getenv(n)
		if v == "" {
			t.Fatalf("%s is not set: start the test servers first, e.g. eval \"$(../shared/tools/vault-dev.sh start)\" and eval \"$(../shared/tools/kube-test-cluster.sh start)\"", n)
		}
		env[n] = v
	}
	return env
}

// Ctx is a context for one test's set-up and calls.
func Ctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

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
		t.Fatalf("vault at %s is not reachable: %v", cfg.Address, err)
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
	roleIDFile = WriteSecretFile(t, dir, role+".role-id", rid.Data["role_id"].(string))
	secretIDFile = WriteSecretFile(t, dir, role+".secret-id", sid.Data["secret_id"].(string))
	return roleIDFile, secretIDFile
}

// WriteSecretFile writes text and a newline to dir/name, mode 0600.
func WriteSecretFile(t testing.TB, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Kube is the test cluster, seen by its admin.
type Kube struct {
	Server, CAFile string
	Admin          kubernetes.Interface
}

// KubeAdmin connects to the test cluster with the admin token.
func KubeAdmin(t testing.TB) *Kube {
	t.Helper()
	env := need(t, "KUBE_API_SERVER", "KUBE_ADMIN_TOKEN", "KUBE_CA_FILE")
	cfg := &rest.Config{Host: env["KUBE_API_SERVER"], BearerToken: env["KUBE_ADMIN_TOKEN"], TLSClientConfig: rest.TLSClientConfig{CAFile: env["KUBE_CA_FILE"]}}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.Discovery().ServerVersion(); err != nil {
		t.Fatalf("kube-apiserver at %s is not reachable: %v", cfg.Host, err)
	}
	return &Kube{Server: cfg.Host, CAFile: env["KUBE_CA_FILE"], Admin: cs}
}

// Namespace makes a fresh namespace (left behind: the test cluster has no
// controller to finish deleting it, and each start uses a fresh etcd).
func (k *Kube) Namespace(t testing.TB, prefix string) string {
	t.Helper()
	ns := Name(prefix)
	if _, err := k.Admin.CoreV1().Namespaces().Create(Ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return ns
}

// ServiceAccountToken makes the service account (if needed) and a token
// for it by TokenRequest, as a projected token would be.
func (k *Kube) ServiceAccountToken(t testing.TB, ns, sa string) string {
	t.Helper()
	ctx := Ctx(t)
	_, err := k.Admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{})
	if err != nil && !strings.Contains(err.Error(), "already exists") {
		t.Fatal(err)
	}
	secs := int64(3600)
	tr, err := k.Admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authv1.TokenRequest{Spec: authv1.TokenRequestSpec{ExpirationSeconds: &secs}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token for %s/%s: %v", ns, sa, err)
	}
	return tr.Status.Token
}

// Secret makes a Secret with data.
func (k *Kube) Secret(t testing.TB, ns, name string, data map[string]string) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, StringData: data}
	if _, err := k.Admin.CoreV1().Secrets(ns).Create(Ctx(t), s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// GrantGetSecrets makes the Role the README documents: get on the named
// Secrets only, bound to the service account.
func (k *Kube) GrantGetSecrets(t testing.TB, ns, sa string, names ...string) {
	t.Helper()
	ctx := Ctx(t)
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "mcp-executor-secrets", Namespace: ns},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}, ResourceNames: names}},
	}
	if _, err := k.Admin.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "mcp-executor-secrets", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: ns}},
	}
	if _, err := k.Admin.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// AuthDelegator binds a service account to system:auth-delegator, as Vault's
// token reviewer needs.
func (k *Kube) AuthDelegator(t testing.TB, ns, sa string) {
	t.Helper()
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: Name("vault-token-review-")},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "system:auth-delegator"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: ns}},
	}
	if _, err := k.Admin.RbacV1().ClusterRoleBindings().Create(Ctx(t), crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// Kubeconfig writes a kubeconfig (mode 0600) that uses token.
func (k *Kube) Kubeconfig(t testing.TB, dir, token string) string {
	t.Helper()
	text := fmt.Sprintf(`apiVersion: v1
kind: Config
current-context: test
clusters:
- name: test
  cluster:
    server: %s
    certificate-authority: %s
contexts:
- name: test
  context: {cluster: test, user: executor}
users:
- name: executor
  user:
    token: %s
`, k.Server, k.CAFile, token)
	p := filepath.Join(dir, Name("kubeconfig-"))
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
