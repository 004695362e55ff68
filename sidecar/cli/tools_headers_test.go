package cli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestToolsHeaderNamedAsNoVariable: an HTTP tool server's header is read
// from its source whatever its name, also one no environment variable
// could have (X-Api-Key), and reaches the server: the official go-sdk's
// streamable HTTP server, which answers 401 without it. `tools` starts
// the servers as the engine does (sidecar.StartUpstream), and lists web's
// tool.
func TestToolsHeaderNamedAsNoVariable(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "web", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "fetch", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != secretValue {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	}))
	defer srv.Close()

	e := folder(t, nil)
	path := severalServers(t, e, false)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(raw), "https://tools.example/mcp", srv.URL+"/mcp", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "tools", "--config", path)
	if code != ExitOK || !strings.Contains(out, "web.fetch") {
		t.Fatalf("tools exits %d; want web.fetch listed:\n%s\n%s", code, out, errOut)
	}
	if err := os.WriteFile(filepath.Join(e.Dir, "secrets", "web-key"), []byte("another"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := run(t, "tools", "--config", path); code != ExitFinding || !strings.Contains(out, "tool server web could not be listed") {
		t.Fatalf("with the wrong key tools exits %d:\n%s\n%s", code, out, errOut)
	}
}
