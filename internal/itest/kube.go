//go:build integration

package itest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

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
		t.Fatalf("kube-apiserver at %s is not reachable (%v): %s", cfg.Host, err, startServers)
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
// for it by TokenRequest, as a projected token would be, for the audiences
// given (none: the API server's own).
func (k *Kube) ServiceAccountToken(t testing.TB, ns, sa string, audiences ...string) string {
	t.Helper()
	ctx := Ctx(t)
	_, err := k.Admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{})
	if err != nil && !strings.Contains(err.Error(), "already exists") {
		t.Fatal(err)
	}
	secs := int64(3600)
	tr, err := k.Admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authv1.TokenRequest{Spec: authv1.TokenRequestSpec{ExpirationSeconds: &secs, Audiences: audiences}}, metav1.CreateOptions{})
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
	// The API server's authorizer learns of a new Role a moment after it is
	// made: wait until it allows each get, so that a test meets the Role in
	// force rather than a refusal that comes of the lag.
	for _, name := range names {
		k.waitAllowed(t, ctx, &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
			User:               "system:serviceaccount:" + ns + ":" + sa,
			Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
			ResourceAttributes: &authzv1.ResourceAttributes{Namespace: ns, Verb: "get", Resource: "secrets", Name: name},
		}})
	}
}

// waitAllowed asks the API server until it allows what review describes.
func (k *Kube) waitAllowed(t testing.TB, ctx context.Context, review *authzv1.SubjectAccessReview) {
	t.Helper()
	for {
		res, err := k.Admin.AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("access review: %v", err)
		}
		if res.Status.Allowed {
			return
		}
		select {
		case <-ctx.Done():
			a := review.Spec.ResourceAttributes
			t.Fatalf("%s was not allowed to %s %s %s/%s in time: %s", review.Spec.User, a.Verb, a.Resource, a.Namespace, a.Name, res.Status.Reason)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// AuthDelegator binds a service account to system:auth-delegator, as Vault's
// token reviewer needs, until the test ends (a cluster-wide binding is not
// left behind with its namespace).
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
	t.Cleanup(func() {
		_ = k.Admin.RbacV1().ClusterRoleBindings().Delete(context.Background(), crb.Name, metav1.DeleteOptions{})
	})
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
