// Command mcpgo is a small MCP tool server built with
// github.com/mark3labs/mcp-go, for tests: a real Go server that decodes
// JSON-RPC with encoding/json into structs, so that member names match
// regardless of case and the last of several wins.
//
// It serves stdio. Every line it reads is copied to the file named by
// MCP_EXECUTOR_TEST_RECORD; every tool call it runs is written, as it
// decoded it, to that file with ".decoded" added ({"tool":…,"arguments":…}).
// Its tools (echo, order, send, slow, notinslip, hidden_admin,
// read_catalogue) answer with their name and their arguments as JSON; slow
// first waits the arguments' "ms" milliseconds.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "mcpgo test server:", err)
		os.Exit(2)
	}
}

func run() error {
	path := os.Getenv("MCP_EXECUTOR_TEST_RECORD")
	if path == "" {
		return fmt.Errorf("MCP_EXECUTOR_TEST_RECORD names no record file")
	}
	record, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("opening the record: %w", err)
	}
	decoded, err := os.OpenFile(path+".decoded", os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("opening the decoded record: %w", err)
	}
	var mu sync.Mutex
	s := server.NewMCPServer("mcpgo-test", "1", server.WithToolCapabilities(false))
	for _, name := range []string{"echo", "order", "send", "slow", "notinslip", "hidden_admin", "read_catalogue"} {
		s.AddTool(mcp.NewTool(name), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			args := req.GetArguments()
			line, err := json.Marshal(map[string]any{"tool": req.Params.Name, "arguments": args})
			if err != nil {
				return nil, err
			}
			mu.Lock()
			_, err = decoded.Write(append(line, '\n'))
			mu.Unlock()
			if err != nil {
				return nil, err
			}
			if ms, ok := args["ms"].(float64); ok && req.Params.Name == "slow" {
				select {
				case <-time.After(time.Duration(ms) * time.Millisecond):
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			b, _ := json.Marshal(args)
			return mcp.NewToolResultText(req.Params.Name + " " + string(b)), nil
		})
	}
	stdio := server.NewStdioServer(s)
	err = stdio.Listen(context.Background(), io.TeeReader(os.Stdin, record), os.Stdout)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}
