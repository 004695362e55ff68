//go:build integration

package cluster

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestHTTPFromTheAgent installs the chart with executor.http.enabled and calls a tool over streamable
// HTTP from the agent container, with nothing but what the chart gives it there (MCP_EXECUTOR_URL,
// MCP_EXECUTOR_TOKEN) and busybox's wget: a 2026-07-28 tools/call answered as JSON, and a 2025-11-25
// session (initialize, its Mcp-Session-Id, a tools/call). A request without the token is refused (401),
// one with another site's Host too (403). The executor logs no warning, and the book holds both stubs.
func TestHTTPFromTheAgent(t *testing.T) {
	r := kc.newRelease(t, "http", "pvc")
	r.set("executor.http.enabled", true)
	r.install(t)
	pod := r.pod(t)
	if !podReady(pod) {
		t.Fatalf("pod %s is not Ready after helm install --wait", pod.Name)
	}
	sh := func(script string) (string, error) {
		out, errOut, err := r.c.kubectl(ctxFor(t, time.Minute), "exec", "-n", r.ns, pod.Name, "-c", "agent", "--", "sh", "-c", "{ "+script+"\n} 2>&1")
		if err != nil {
			return out, fmt.Errorf("%w (kubectl: %s)", err, strings.TrimSpace(errOut))
		}
		return out, nil
	}
	const post = `post() { wget -q -O - --header 'Content-Type: application/json' --header 'Accept: application/json' ` +
		`--header "Authorization: Bearer $MCP_EXECUTOR_TOKEN" "$@" "$MCP_EXECUTOR_URL"; }` + "\n"
	if out, err := sh(`echo "$MCP_EXECUTOR_URL"`); err != nil || strings.TrimSpace(out) != "http://127.0.0.1:8080/mcp" {
		t.Fatalf("MCP_EXECUTOR_URL in the agent: %q (%v)", out, err)
	}

	// 2026-07-28: one POST, no session.
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"busybox","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	out, err := sh(post + `post --header 'MCP-Protocol-Version: 2026-07-28' --header 'Mcp-Method: tools/call' --header 'Mcp-Name: echo' ` +
		`--post-data '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"over http"},` + meta + `}}'`)
	if err != nil || !strings.Contains(out, `"text":"echo: over http"`) || !strings.Contains(out, `"id":1`) {
		t.Fatalf("a 2026-07-28 call from the agent: %q (%v)", out, err)
	}

	// 2025-11-25: a session.
	out, err = sh(post + `sid=$(post -S -O /tmp/init.json --post-data '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"busybox","version":"1"}}}' 2>&1 | sed -n 's/^ *[Mm]cp-[Ss]ession-[Ii]d: *//p' | tr -d '\r')
[ -n "$sid" ] || { echo "no session id"; cat /tmp/init.json; exit 1; }
s="--header Mcp-Session-Id:$sid --header Mcp-Protocol-Version:2025-11-25"
post $s --post-data '{"jsonrpc":"2.0","method":"notifications/initialized"}'
post $s --post-data '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"in a session"}}}'`)
	if err != nil || !strings.Contains(out, `"text":"echo: in a session"`) {
		t.Fatalf("a 2025-11-25 session from the agent: %q (%v)", out, err)
	}

	// Without the token, and naming another site: refused.
	out, _ = sh(`wget -q -O - --header 'Content-Type: application/json' --header 'Accept: application/json' --post-data '{"jsonrpc":"2.0","id":3,"method":"ping"}' "$MCP_EXECUTOR_URL"; echo "exit $?"`)
	if !strings.Contains(out, "401") {
		t.Errorf("a request without the token: %q", out)
	}
	out, _ = sh(post + `post --header 'Host: evil.example.com' --post-data '{"jsonrpc":"2.0","id":4,"method":"ping"}'; echo "exit $?"`)
	if !strings.Contains(out, "403") && !strings.Contains(out, "400") { // busybox may send its own Host beside: two are refused too
		t.Errorf("a request naming another site: %q", out)
	}

	logs := r.logs(t, pod.Name, false)
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, `"level":"ERROR"`) || (strings.Contains(line, `"level":"WARN"`) && !strings.Contains(line, "refused")) {
			t.Errorf("the executor warned: %s", line)
		}
	}
	book := readBook(t, r)
	if n := strings.Count(book, "\n"); n < 3 { // the slip and two stubs
		t.Errorf("the book has %d lines, want the slip and two stubs:\n%s", n, book)
	}
}
