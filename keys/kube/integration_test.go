//go:build integration

package kube_test

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/internal/itest"
	"github.com/seed-6e06167c/mcp-executor/keys/kube"
)

// TestSecretGetByNameOnly runs against the real kube-apiserver: a service
// account whose Role grants get on one named Secret reads it, and is
// refused, with a message naming the Role it needs, on another.
func TestSecretGetByNameOnly(t *testing.T) {
	k := itest.KubeAdmin(t)
	ctx := itest.Ctx(t)
	ns := k.Namespace(t, "keys-kube-")
	k.Secret(t, ns, "executor-keys", map[string]string{"copy-key": "value-1\n", "other": "x"})
	k.Secret(t, ns, "unrelated", map[string]string{"copy-key": "value-2"})
	tok := k.ServiceAccountToken(t, ns, "mcp-executor")
	k.GrantGetSecrets(t, ns, "mcp-executor", "executor-keys", "not-made-yet")

	c, err := kube.New(kube.Options{Kubeconfig: k.Kubeconfig(t, t.TempDir(), tok)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(c.Auth(), "kubeconfig ") {
		t.Errorf("Auth() = %q", c.Auth())
	}
	got, err := c.SecretValue(ctx, ns, "executor-keys", "copy-key")
	if err != nil || string(got) != "value-1\n" {
		t.Fatalf("allowed Secret: %q, %v", got, err)
	}
	_, err = c.SecretValue(ctx, ns, "unrelated", "copy-key")
	if !errors.Is(err, kube.ErrForbidden) {
		t.Fatalf("Secret outside the Role: %v, want ErrForbidden", err)
	}
	for _, want := range []string{"Secret " + ns + "/unrelated", "get refused", "resourceNames [unrelated]", "namespace " + ns} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "value-2") {
		t.Errorf("refusal holds the value")
	}
	if _, err := c.SecretValue(ctx, ns, "executor-keys", "absent"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing key: %v, want fs.ErrNotExist", err)
	}
	if _, err := c.SecretValue(ctx, ns, "not-made-yet", "k"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing Secret: %v, want fs.ErrNotExist", err)
	}
	if ok, err := c.SecretExists(ctx, ns, "not-made-yet"); ok || err != nil {
		t.Errorf("SecretExists(not-made-yet) = %t, %v", ok, err)
	}
	if ok, err := c.SecretExists(ctx, ns, "executor-keys"); !ok || err != nil {
		t.Errorf("SecretExists(executor-keys) = %t, %v", ok, err)
	}
	// A token the API server does not know.
	bad, err := kube.New(kube.Options{Kubeconfig: k.Kubeconfig(t, t.TempDir(), "not-a-token")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bad.SecretValue(ctx, ns, "executor-keys", "copy-key"); err == nil || !strings.Contains(err.Error(), "does not accept the credentials") {
		t.Errorf("bad token: %v", err)
	}
}
