//go:build integration

package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
)

// TestKeysAndCheckWithSecrets keeps the agent's keys and the copy key in a Kubernetes Secret on the real
// kube-apiserver of scripts/testenv (KUBECONFIG from `kube-apiserver.sh start`). keys makes them but
// writes no Secret: without --manifests it says how to get the manifest and prints no key; with it, one
// manifest for the one Secret holding both keys is written (0600). Once applied, keys prints the
// permission and check says the Secret was reached and by which credentials.
func TestKeysAndCheckWithSecrets(t *testing.T) {
	kubeconfig := os.Getenv("KUBECONFIG")
	if kubeconfig == "" {
		t.Fatal(`KUBECONFIG is not set: start the test servers first: eval "$(./scripts/testenv/servers.sh start)" in the repository's folder (it builds them once)`)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	name := "keys-test-" + strings.ToLower(strings.NewReplacer("_", "x", "-", "y").Replace(canon.NewID()[:10]))
	t.Cleanup(func() { _ = cs.CoreV1().Secrets("default").Delete(context.Background(), name, metav1.DeleteOptions{}) })

	e := folder(t, nil)
	settingsEdit(t, e.SettingsPath, func(s map[string]any) {
		s["kubernetes"] = map[string]any{"kubeconfig": kubeconfig}
		s["agent"].(map[string]any)["keys"] = "secret:default/" + name + "#agent"
		s["executor"].(map[string]any)["copyKey"] = "secret:default/" + name + "#copy"
	})

	code, out, errOut := run(t, "keys", "--config", e.SettingsPath, "--json")
	if code != ExitFinding || out != "" || !strings.Contains(errOut, "--manifests FILE") {
		t.Fatalf("without --manifests: exit %d\nstdout %q\nstderr:\n%s", code, out, errOut)
	}
	manifest := filepath.Join(e.Dir, "secrets.yaml")
	code, out, errOut = run(t, "keys", "--config", e.SettingsPath, "--manifests", manifest)
	if code != ExitFinding || !strings.Contains(out, "kubectl apply --server-side -f "+manifest) {
		t.Fatalf("with --manifests: exit %d\n%s\n%s", code, out, errOut)
	}
	info, err := os.Stat(manifest)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("manifest: %v %v", err, info)
	}
	doc, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	var secret corev1.Secret
	if err := yaml.UnmarshalStrict(doc, &secret); err != nil {
		t.Fatalf("one Secret document expected: %v\n", err)
	}
	if len(secret.StringData) != 2 || secret.StringData["agent"] == "" || secret.StringData["copy"] == "" {
		t.Fatalf("the manifest does not hold both keys: %v", keysOfStrings(secret.StringData))
	}
	for _, v := range secret.StringData {
		if strings.Contains(out+errOut, v) {
			t.Fatal("a key held in the manifest appears in the output")
		}
	}
	// Apply it, as `kubectl apply` would.
	if _, err := cs.CoreV1().Secrets("default").Create(ctx, &secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The slip must now name the agent keys kept in the Secret: sign a new one.
	code, out, errOut = run(t, "keys", "--config", e.SettingsPath, "--json")
	if code != ExitOK {
		t.Fatalf("after applying: exit %d\n%s\n%s", code, out, errOut)
	}
	if strings.Contains(out, secret.StringData["agent"]) || strings.Contains(out, secret.StringData["copy"]) {
		t.Fatal("a private key appears in the output")
	}

	code, out, _ = run(t, "check", "--config", e.SettingsPath)
	for _, want := range [][]string{
		{"ok:", "agent keys (agent.keys)", "Secret default/" + name, "reached by kubeconfig " + kubeconfig, "present"},
		{"ok:", "copy key (executor.copyKey)", "reached by kubeconfig", "present"},
		{"problem:", "slip", "other agent keys"}, // the slip was signed for the keys devsetup made
	} {
		if !has(lines(out), want...) {
			t.Errorf("no line with %q:\n%s", want, out)
		}
	}
	if code != ExitFinding {
		t.Errorf("check: exit %d, want 1 (slip for other agent keys)", code)
	}
}

func keysOfStrings(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
