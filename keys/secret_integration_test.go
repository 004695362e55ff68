//go:build integration

package keys

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/internal/itest"
	"github.com/seed-6e06167c/mcp-executor/keys/kube"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// TestSecretSources runs against the real kube-apiserver: key sets and the
// copy key in a Secret, a missing value answered with a manifest that,
// applied with kubectl, makes the next load succeed.
func TestSecretSources(t *testing.T) {
	k := itest.KubeAdmin(t)
	ctx := itest.Ctx(t)
	ns := k.Namespace(t, "keys-secret-")
	seeds := NewSeeds()
	k.Secret(t, ns, "agent-keys", map[string]string{"keys.json": string(seeds.Marshal()) + "\n"})
	tok := k.ServiceAccountToken(t, ns, "mcp-executor")
	k.GrantGetSecrets(t, ns, "mcp-executor", "agent-keys", "executor-copy")
	kc, err := kube.New(kube.Options{Kubeconfig: k.Kubeconfig(t, t.TempDir(), tok)})
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Kube: kc}

	s, err := LoadKeySet(ctx, KeySetSpec{Source: "secret:" + ns + "/agent-keys#keys.json"}, "", opts)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := jwk.NewLocalSigner(seeds.Ed25519, seeds.MLDSA87)
	if !s.Keys().Equal(want.Keys()) {
		t.Errorf("key set from the Secret differs from its seeds")
	}

	copySpec := "secret:" + ns + "/executor-copy#copy.key"
	_, _, err = LoadOrCreateCopyKey(ctx, copySpec, "", opts)
	var mn *ManifestNeeded
	if !errors.As(err, &mn) || mn.SecretExists || mn.Key != "copy.key" {
		t.Fatalf("creating a copy key in a Secret: %v, want *ManifestNeeded", err)
	}
	var manifest corev1.Secret
	if err := yaml.Unmarshal(mn.Manifest, &manifest); err != nil {
		t.Fatal(err)
	}
	value := manifest.StringData["copy.key"]
	if len(value) != 43 || strings.Contains(err.Error(), value) {
		t.Fatalf("manifest value %q (want 43 characters), or the error holds it: %v", value, err)
	}
	apply(t, k, mn)
	key, err := LoadCopyKey(ctx, copySpec, "", opts)
	if err != nil || len(key) != CopyKeySize {
		t.Fatalf("copy key after applying the manifest: %v", err)
	}

	// A Secret that exists but lacks the key (one made by an earlier apply,
	// and one made otherwise): the apply adds the key and keeps the
	// Secret's other keys.
	for _, secret := range []string{"executor-copy", "agent-keys"} {
		execSpec := KeySetSpec{Source: "secret:" + ns + "/" + secret + "#executor.json"}
		_, _, err = LoadOrCreateKeySet(ctx, execSpec, "", opts)
		if !errors.As(err, &mn) || !mn.SecretExists {
			t.Fatalf("creating a key set in existing Secret %s: %v, want *ManifestNeeded", secret, err)
		}
		apply(t, k, mn)
		if _, err := LoadKeySet(ctx, execSpec, "", opts); err != nil {
			t.Fatalf("executor key set after applying: %v", err)
		}
	}
	if s2, err := LoadKeySet(ctx, KeySetSpec{Source: "secret:" + ns + "/agent-keys#keys.json"}, "", opts); err != nil || !s2.Keys().Equal(s.Keys()) {
		t.Fatalf("the Secret's other key was changed by the apply: %v", err)
	}
	if again, err := LoadCopyKey(ctx, copySpec, "", opts); err != nil || string(again) != string(key) {
		t.Fatalf("the copy key was changed by a later apply to its Secret: %v", err)
	}

	st := CheckSource(ctx, copySpec, "", opts)
	if !st.Reached || !st.Present || !strings.HasPrefix(st.Auth, "kubeconfig ") {
		t.Errorf("CheckSource = %+v", st)
	}
	st = CheckSource(ctx, "secret:"+ns+"/elsewhere#k", "", opts)
	if !st.Reached || st.Present || !errors.Is(st.Err, kube.ErrForbidden) {
		t.Errorf("CheckSource of a Secret outside the Role = %+v", st)
	}
}

// apply runs the manifest's ApplyCommand with kubectl, as the user would.
func apply(t *testing.T, k *itest.Kube, mn *ManifestNeeded) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "secret.yaml")
	if err := os.WriteFile(p, mn.Manifest, 0o600); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--server", k.Server, "--certificate-authority", k.CAFile, "--token", os.Getenv("KUBE_ADMIN_TOKEN")},
		strings.Fields(mn.ApplyCommand(p))[1:]...)
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Fatalf("kubectl is not on PATH (%v): run ./scripts/test.sh setup in the repository's folder, which puts it in ~/.cache/mcp-executor-tools/bin; put that folder on PATH", err)
	}
	cmd := exec.Command("kubectl", args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
}
