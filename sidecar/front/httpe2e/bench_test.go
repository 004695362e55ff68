package httpe2e

import (
	"context"
	"net/http"
	"os/exec"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/internal/syncbuf"
)

// BenchmarkHTTPFront is the executor's added time per tool call over HTTP against over stdio, and
// against go-sdk's conformance everything-server's own streamable HTTP transport, in one run: each
// iteration makes one call (test_simple_text) through each of
//
//	direct-http   go-sdk's client → the everything-server's own HTTP (stateful): the HTTP floor
//	direct-stdio  go-sdk's client → the everything-server on stdio: the stdio floor
//	exec-stdio    go-sdk's client → mcp-executor stdio → the everything-server on stdio
//	exec-http     go-sdk's client → serve --listen http:// (a 2025-11-25 session) → the server on stdio
//	exec-http-26  the same in the 2026-07-28 era (server/discover, a pooled session)
//
// and reports each one's time per call, the added times (exec-stdio − direct-stdio, exec-http −
// direct-http) and their ratios. Run: go test -run XXX -bench HTTPFront -benchtime 200x ./sidecar/front/httpe2e/
func BenchmarkHTTPFront(b *testing.B) {
	server, _ := conformancePair(b)
	ctx := context.Background()
	tools := map[string]devsetup.Tool{"test_simple_text": {Action: "provared.data.read"}}
	// Two working folders: a book is open in one executor at a time.
	env, err := devsetup.Build(devsetup.Options{Dir: b.TempDir(), Command: server, Tools: tools})
	if err != nil {
		b.Fatal(err)
	}
	stdioEnv, err := devsetup.Build(devsetup.Options{Dir: b.TempDir(), Command: server, Tools: tools})
	if err != nil {
		b.Fatal(err)
	}

	port := freePort(b)
	direct := exec.Command(server, "-http", "127.0.0.1:"+port, "-stateless=false")
	if err := direct.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = direct.Process.Kill(); _ = direct.Wait() })
	directURL := "http://127.0.0.1:" + port + "/mcp"
	for deadline := time.Now().Add(30 * time.Second); ; {
		if resp, err := http.Get(directURL); err == nil {
			_ = resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("the everything-server's own HTTP did not come up")
		}
		time.Sleep(50 * time.Millisecond)
	}
	exe := binary(b)
	serve := exec.Command(exe, "serve", "--config", env.SettingsPath, "--listen", "http://127.0.0.1:"+freePort(b)+"/mcp")
	log := &syncbuf.Buffer{}
	serve.Stderr = log
	if err := serve.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = serve.Process.Kill(); _ = serve.Wait() })
	execURL := serveURL(b, log)

	connect := func(t mcp.Transport, version string) *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		cs, err := c.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	paths := []struct {
		name string
		cs   *mcp.ClientSession
	}{
		{"direct-http", connect(&mcp.StreamableClientTransport{Endpoint: directURL, DisableStandaloneSSE: true}, "2025-11-25")},
		{"direct-stdio", connect(&mcp.CommandTransport{Command: exec.Command(server)}, "2025-11-25")},
		{"exec-stdio", connect(&mcp.CommandTransport{Command: exec.Command(exe, "stdio", "--config", stdioEnv.SettingsPath)}, "2025-11-25")},
		{"exec-http", connect(&mcp.StreamableClientTransport{Endpoint: execURL, DisableStandaloneSSE: true}, "2025-11-25")},
		{"exec-http-26", connect(&mcp.StreamableClientTransport{Endpoint: execURL, DisableStandaloneSSE: true}, "2026-07-28")},
	}
	call := func(cs *mcp.ClientSession) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_simple_text", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			b.Fatalf("call: %v %+v", err, res)
		}
	}
	for _, p := range paths { // warm each path once
		call(p.cs)
	}
	spent := make([]time.Duration, len(paths))
	b.ResetTimer()
	for b.Loop() {
		for i, p := range paths {
			start := time.Now()
			call(p.cs)
			spent[i] += time.Since(start)
		}
	}
	b.StopTimer()
	per := map[string]float64{}
	for i, p := range paths {
		per[p.name] = float64(spent[i].Nanoseconds()) / float64(b.N)
		b.ReportMetric(per[p.name]/1e3, p.name+"-µs/call")
	}
	addedStdio := per["exec-stdio"] - per["direct-stdio"]
	addedHTTP := per["exec-http"] - per["direct-http"]
	added26 := per["exec-http-26"] - per["direct-http"]
	b.ReportMetric(addedStdio/1e3, "added-stdio-µs/call")
	b.ReportMetric(addedHTTP/1e3, "added-http-µs/call")
	b.ReportMetric(added26/1e3, "added-http-26-µs/call")
	b.ReportMetric(addedHTTP/addedStdio, "added-http/added-stdio")
	b.ReportMetric(per["exec-http"]/per["direct-http"], "exec-http/direct-http")
	b.ReportMetric(per["exec-http"]/per["exec-stdio"], "exec-http/exec-stdio")
}
