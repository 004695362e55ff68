//go:build integration

package keysintegration_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
)

// runToolServer is the tool server: a go-sdk server on stdio with two tools.
// "env" answers with the name of every variable in its environment and the
// fingerprint (SHA-256, base64url) of its value, never the value itself, so
// that the test can tell what the server saw while no secret crosses the
// executor. "echo" answers with its arguments.
func runToolServer() {
	s := mcp.NewServer(&mcp.Implementation{Name: "keysintegration-server", Version: "1"}, nil)
	obj := map[string]any{"type": "object"}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	s.AddTool(&mcp.Tool{Name: "env", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		seen := map[string]string{}
		for _, kv := range os.Environ() {
			name, value, _ := strings.Cut(kv, "=")
			seen[name] = canon.Fingerprint([]byte(value))
		}
		b, err := json.Marshal(seen)
		if err != nil {
			return nil, err
		}
		return text(string(b)), nil
	})
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("echo " + string(req.Params.Arguments)), nil
	})
	s.AddTool(&mcp.Tool{Name: "send", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("sent"), nil
	})
	if err := s.Run(context.Background(), &mcp.IOTransport{Reader: os.Stdin, Writer: nopWriteCloser{os.Stdout}}); err != nil {
		fmt.Fprintln(os.Stderr, "keysintegration tool server:", err)
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
