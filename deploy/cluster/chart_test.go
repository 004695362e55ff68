//go:build integration

package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestChartInPod installs the chart in both state modes and checks, on the running pod, what the README
// promises: the pod becomes Ready; MCP sessions work from outside the pod through kubectl exec into the
// executor container (joining the running executor through its socket) and from the agent container
// through the bridge; the agent cannot reach the copy, the keys, the service-account token or the
// executor's processes; the executor logs no warning about its own set-up; `helm test` passes.
func TestChartInPod(t *testing.T) {
	for _, state := range []string{"emptyDir", "pvc"} {
		t.Run(state, func(t *testing.T) {
			r := kc.newRelease(t, "chart-"+strings.ToLower(state), state)
			r.install(t)
			pod := r.pod(t)
			if !podReady(pod) {
				t.Fatalf("pod %s is not Ready after helm install --wait", pod.Name)
			}

			// From outside the pod: the one command the README documents.
			outside, _ := r.session(t, pod.Name, "executor", "mcp-executor", "bridge", "--connect", socketAddr)
			tools, err := outside.ListTools(ctxFor(t, time.Minute), nil)
			if err != nil {
				t.Fatalf("tools/list through kubectl exec: %v", err)
			}
			var names []string
			for _, tool := range tools.Tools {
				names = append(names, tool.Name)
			}
			slices.Sort(names)
			if !slices.Equal(names, []string{"alloc", "echo", "sleep"}) {
				t.Errorf("tools through kubectl exec: %v", names)
			}
			if text, isErr := callText(t, ctxFor(t, time.Minute), outside, "echo", map[string]any{"text": "from outside"}); isErr || text != "echo: from outside" {
				t.Errorf("echo through kubectl exec: %q (isError %v)", text, isErr)
			}
			outside.Close()

			// From the agent container, through the bridge the chart installs there.
			inside, _ := r.session(t, pod.Name, "agent", bridgeInAgent, "bridge", "--connect", socketAddr)
			if text, isErr := callText(t, ctxFor(t, time.Minute), inside, "echo", map[string]any{"text": "from the agent"}); isErr || text != "echo: from the agent" {
				t.Errorf("echo through the agent's bridge: %q (isError %v)", text, isErr)
			}
			inside.Close()

			checkAgentIsolation(t, r, pod.Name)

			// One executor served both sessions: the book holds both receipts, and no second executor
			// was started on it (that would have failed on the copy's lock and logged it).
			logs := r.logs(t, pod.Name, false)
			if n := strings.Count(logs, `"msg":"session opened"`); n != 2 {
				t.Errorf("the executor opened %d sessions, want 2:\n%s", n, logs)
			}
			for _, line := range strings.Split(logs, "\n") {
				if strings.Contains(line, `"level":"WARN"`) || strings.Contains(line, `"level":"ERROR"`) {
					t.Errorf("the executor warned about its set-up: %s", line)
				}
			}
			if state == "pvc" {
				book := readBook(t, r)
				if n := strings.Count(book, "\n"); n < 3 { // the slip and two stubs
					t.Errorf("the book on the volume has %d lines, want the slip and two stubs:\n%s", n, book)
				}
			}

			out, err := r.helm(t, 2*time.Minute, "test", releaseName, "--logs", "--timeout", "120s")
			if err != nil {
				t.Fatalf("helm test with state.type=%s: %v\n%s", state, err, out)
			}
			if !strings.Contains(out, "check: all well") {
				t.Errorf("helm test's check did not say all well:\n%s", out)
			}
		})
	}
}

// checkAgentIsolation runs a script in the agent container that looks for what it must not reach.
func checkAgentIsolation(t *testing.T, r *release, pod string) {
	t.Helper()
	sh := func(script string) (string, error) {
		// The script's own errors join its output inside the pod (2>&1), so that kubectl's stderr, which
		// can carry the client's noise ("Unknown stream id 1, discarding message"), is never taken for
		// what the agent sees; it is kept for the error only.
		out, errOut, err := r.c.kubectl(ctxFor(t, time.Minute), "exec", "-n", r.ns, pod, "-c", "agent", "--", "sh", "-c", "{ "+script+"\n} 2>&1")
		if err != nil {
			return out, fmt.Errorf("%w (kubectl: %s)", err, strings.TrimSpace(errOut))
		}
		return out, nil
	}
	// The socket folder holds the socket and nothing else.
	if out, err := sh(`ls -A /run/mcp-executor`); err != nil || strings.TrimSpace(out) != "executor.sock" {
		t.Errorf("the agent's /run/mcp-executor holds %q (%v), want only executor.sock", out, err)
	}
	if out, err := sh(`test -S /run/mcp-executor/executor.sock && ls -ln /run/mcp-executor/executor.sock`); err != nil || !strings.HasPrefix(out, "srw-rw----") {
		t.Errorf("the socket as the agent sees it: %q (%v), want a socket of mode 0660", out, err)
	}
	// The executor's state, settings and token folders are not mounted in the agent; no file of the
	// copy, the book, a key or a token is anywhere the agent can see.
	for _, p := range []string{"/var/lib/mcp-executor", "/etc/mcp-executor", "/var/run/secrets/kubernetes.io/serviceaccount", "/var/run/secrets"} {
		if out, err := sh("test -e " + p + " && echo present"); err == nil || strings.Contains(out, "present") {
			t.Errorf("the agent sees %s (%q)", p, out)
		}
	}
	out, err := sh(`find / \( -path /proc -o -path /sys \) -prune -o \( -name 'copy.jsonl*' -o -name 'book.jsonl*' -o -name '*.jwk' -o -name token -o -name executor.json -o -name slip.json \) -print 2>/dev/null; true`)
	if err != nil || strings.TrimSpace(out) != "" {
		t.Errorf("files the agent must not see: %q (%v)", out, err)
	}
	// No process of the executor (serve, the tool server) is visible: no shared process namespace.
	out, err = sh(`for p in /proc/[0-9]*; do tr '\0' ' ' < $p/cmdline 2>/dev/null; echo; done`)
	if err != nil {
		t.Fatalf("listing the agent's processes: %v\n%s", err, out)
	}
	if strings.Contains(out, "mcp-executor serve") || strings.Contains(out, "podtool") {
		t.Errorf("the agent sees the executor's processes:\n%s", out)
	}
	// The agent has no service-account token in its environment either.
	if out, err := sh(`env | grep -i -e token -e secret; true`); err != nil || strings.TrimSpace(out) != "" {
		t.Errorf("the agent's environment names a token or secret: %q (%v)", out, err)
	}
}

// readBook reads the book from the host folder behind the pvc's hostPath volume.
func readBook(t *testing.T, r *release) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.stateDir, "book.jsonl"))
	if err != nil {
		t.Fatalf("reading the book on the volume: %v", err)
	}
	return string(b)
}
