package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWantsKubernetes(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"--config", "x"}, false},
		{[]string{"--kubernetes"}, true},
		{[]string{"--namespace", "a", "-kubernetes"}, true},
		{[]string{"--kubernetes=true", "--id", "x", "--yes"}, true},
		{[]string{"--", "--kubernetes"}, false},
		{[]string{"--kubernetes=false"}, false},
	} {
		if got := wantsKubernetes(c.args); got != c.want {
			t.Errorf("wantsKubernetes(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}

// TestApproveKubernetesUsage: the flag combinations refused before any API server is asked. (The
// answers themselves are tested on a real cluster: deploy/cluster TestApprovalRequests.)
func TestApproveKubernetesUsage(t *testing.T) {
	dir := t.TempDir()
	noBlock := filepath.Join(dir, "executor.json")
	if err := os.WriteFile(noBlock, []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		code int
		says string
	}{
		{"no namespace", []string{"--kubernetes"}, ExitUsage, "exactly one of --namespace NS and --config FILE"},
		{"both", []string{"--kubernetes", "--namespace", "a", "--config", noBlock}, ExitUsage, "exactly one of"},
		{"yes without id", []string{"--kubernetes", "--namespace", "a", "--yes"}, ExitUsage, "answer the request named by --id"},
		{"id without answer", []string{"--kubernetes", "--namespace", "a", "--id", "x"}, ExitUsage, "exactly one of --yes and --no"},
		{"id and once", []string{"--kubernetes", "--namespace", "a", "--id", "x", "--no", "--once"}, ExitUsage, "--once asks"},
		{"extra argument", []string{"--kubernetes", "--namespace", "a", "x"}, ExitUsage, "usage: mcp-executor approve"},
		{"bad settings", []string{"--kubernetes", "--config", noBlock}, ExitFinding, "mcp-executor approve:"},
		{"no kubeconfig", []string{"--kubernetes", "--namespace", "a", "--kubeconfig", filepath.Join(dir, "missing")}, ExitFinding, "reading the kubeconfig"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Main(context.Background(), Env{Args: append([]string{"approve"}, c.args...), Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
			if code != c.code || !strings.Contains(errb.String(), c.says) {
				t.Fatalf("exit %d, want %d; stderr %q, want it to say %q", code, c.code, errb.String(), c.says)
			}
		})
	}
}
