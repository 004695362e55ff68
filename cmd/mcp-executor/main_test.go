package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-6e06167c/mcp-executor/internal/syncbuf"
)

// The tests of this package run the binary as a new user does: built once
// here (without the race detector, so that its times are a user's; the
// engine's own tests run it under the detector), started as a process in a
// folder of its own. The test binary is also the tool server those tests
// start, run again with serverRoleEnv set.
const serverRoleEnv = "MCP_EXECUTOR_CMD_TEST_SERVER"

// executorBin is the built mcp-executor.
var executorBin string

func TestMain(m *testing.M) {
	if os.Getenv(serverRoleEnv) == "sleep" {
		runSleepServer()
		return
	}
	dir, err := os.MkdirTemp("", "mcp-executor-cmd-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	executorBin = filepath.Join(dir, "mcp-executor")
	build := exec.Command("go", "build", "-o", executorBin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "cmd tests: building the binary: %v\n%s\n", err, out)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir) // a temporary folder: what is left is the system's to clean
	os.Exit(code)
}

// sleepTools are the sleep server's tools: each answers after its name's
// milliseconds (sleep_5 after 5 ms).
var sleepTools = []int{5, 50, 500}

// runSleepServer is a go-sdk MCP server on stdio whose tools answer after
// a known time.
func runSleepServer() {
	s := mcp.NewServer(&mcp.Implementation{Name: "sleep", Version: "1"}, nil)
	for _, ms := range sleepTools {
		d := time.Duration(ms) * time.Millisecond
		s.AddTool(&mcp.Tool{Name: "sleep_" + strconv.Itoa(ms), InputSchema: map[string]any{"type": "object"},
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
			func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				select {
				case <-time.After(d):
				case <-ctx.Done():
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "slept " + d.String()}}}, nil
			})
	}
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "sleep server:", err)
		os.Exit(1)
	}
}

// runBin runs the binary with args in dir and returns its exit code,
// stdout and stderr.
func runBin(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, executorBin, args...)
	cmd.Dir = dir
	var out, errOut syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("mcp-executor %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return code, out.String(), errOut.String()
}
