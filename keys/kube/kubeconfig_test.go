package kube

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRestConfigFromKubeconfig(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "config")
	text := `apiVersion: v1
kind: Config
current-context: test
clusters:
- name: c1
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority: ca.crt
    tls-server-name: kubernetes
contexts:
- name: test
  context: {cluster: c1, user: u1}
users:
- name: u1
  user:
    tokenFile: token
`
	if err := writeKubeconfig(p, text); err != nil {
		t.Fatal(err)
	}
	// client-go's loader checks that the files the kubeconfig names can be read.
	for _, f := range []string{"ca.crt", "token"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("placeholder\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	rc, ctxName, err := restConfigFromKubeconfig(p)
	if err != nil {
		t.Fatal(err)
	}
	if ctxName != "test" || rc.Host != "https://127.0.0.1:6443" || rc.TLSClientConfig.CAFile != filepath.Join(dir, "ca.crt") ||
		rc.TLSClientConfig.ServerName != "kubernetes" || rc.BearerTokenFile != filepath.Join(dir, "token") {
		t.Errorf("rest config = %+v (context %q)", rc, ctxName)
	}
}
