// Package e2e_test drives the person's page end to end with real processes
// only (issue 14): the mcp-executor binary serving `page`, headless
// Chromium with a CDP WebAuthn virtual authenticator as the person's
// browser and passkey, the binary again as `stdio` executor with a go-sdk
// client over its pipes, and a real tool server as its child. The page and
// the executor share nothing but files: the settings, the slip and its
// cancellation, and the queue folder (docs/design/page.md).
//
// The test binary is also the tool server the executor starts (run again
// with serverEnv set), so that the server is a real child process.
package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	serverEnv = "MCP_EXECUTOR_PAGE_E2E_SERVER" // "sdk": run as the tool server
	recordEnv = "MCP_EXECUTOR_PAGE_E2E_RECORD" // file the server copies every line it reads to
)

// executorBin is the mcp-executor binary, built once for the package.
var executorBin string

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) == "sdk" {
		runToolServer()
		return
	}
	dir, err := os.MkdirTemp("", "mcp-executor-page-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	executorBin = filepath.Join(dir, "mcp-executor")
	// Under -race the executor is built with the race detector too, so
	// that its goroutines are checked as well.
	args := []string{"build", "-o", executorBin}
	if raceEnabled {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, "./cmd/mcp-executor")...)
	build.Dir = filepath.Join("..", "..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "page e2e tests: building ./cmd/mcp-executor: %v\n%s\n", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// runToolServer is a go-sdk MCP server on stdio with the supplies tools:
// order (answers "ordered" and its arguments) and list.
func runToolServer() {
	record, err := os.OpenFile(os.Getenv(recordEnv), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tool server:", err)
		os.Exit(2)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "supplies", Version: "1"}, nil)
	obj := map[string]any{"type": "object"}
	s.AddTool(&mcp.Tool{Name: "order", InputSchema: obj}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a map[string]any
		if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
			return nil, fmt.Errorf("order: the arguments: %w", err)
		}
		b, err := json.Marshal(a)
		if err != nil {
			return nil, fmt.Errorf("order: %w", err)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ordered " + string(b)}}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "list", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "paper, pens, staples"}}}, nil
	})
	in := io.NopCloser(io.TeeReader(os.Stdin, record))
	if err := s.Run(context.Background(), &mcp.IOTransport{Reader: in, Writer: nopWriteCloser{os.Stdout}}); err != nil {
		fmt.Fprintln(os.Stderr, "tool server:", err)
		os.Exit(1)
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
