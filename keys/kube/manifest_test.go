package kube

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

func TestManifestNeeded(t *testing.T) {
	const value = "S3CRET-value-for-the-manifest"
	m := &ManifestNeeded{Namespace: "agents", Name: "mcp-executor-keys", Key: "copy-key", SecretExists: true,
		Manifest: SecretManifest("agents", "mcp-executor-keys", "copy-key", []byte(value))}
	if strings.Contains(m.Error(), value) {
		t.Errorf("Error() holds the value: %s", m.Error())
	}
	for _, want := range []string{"agents/mcp-executor-keys", `no key "copy-key"`, "kubectl apply --server-side --field-manager=mcp-executor.copy-key -f <file>"} {
		if !strings.Contains(m.Error(), want) {
			t.Errorf("Error() %q lacks %q", m.Error(), want)
		}
	}
	var s corev1.Secret
	if err := yaml.UnmarshalStrict(m.Manifest, &s); err != nil {
		t.Fatalf("manifest is not a Secret: %v\n%s", err, m.Manifest)
	}
	if s.Kind != "Secret" || s.APIVersion != "v1" || s.Namespace != "agents" || s.Name != "mcp-executor-keys" ||
		s.Type != corev1.SecretTypeOpaque || s.StringData["copy-key"] != value || len(s.StringData) != 1 {
		t.Errorf("manifest = %+v", s)
	}
	m.SecretExists = false
	if !strings.Contains(m.Error(), "does not exist") {
		t.Errorf("Error() for a missing Secret: %s", m.Error())
	}
}

func TestNewFromKubeconfigRefusals(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]string{
		"not yaml":   "::::",
		"no context": "apiVersion: v1\nkind: Config\nclusters: []\n",
		"no server":  "apiVersion: v1\nkind: Config\ncurrent-context: c\ncontexts:\n- name: c\n  context: {cluster: x, user: u}\n",
	}
	for name, text := range cases {
		p := dir + "/" + strings.ReplaceAll(name, " ", "-")
		if err := writeKubeconfig(p, text); err != nil {
			t.Fatal(err)
		}
		if _, err := New(Options{Kubeconfig: p}); err == nil || !strings.Contains(err.Error(), "kubeconfig "+p) {
			t.Errorf("%s: New = %v, want an error naming the kubeconfig", name, err)
		}
	}
}
