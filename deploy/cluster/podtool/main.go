// Command podtool is the tool server the cluster tests put into the executor's image: a small MCP
// server on standard input and output with three tools the tests need — echo (a quick call), sleep (a
// call in flight while a pod is deleted or the executor is killed) and alloc (memory, for the OOM test).
// It is a test fixture, not part of the product.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// EchoArgs are the echo tool's arguments.
type EchoArgs struct {
	Text string `json:"text" jsonschema:"the text to send back"`
}

// SleepArgs are the sleep tool's arguments.
type SleepArgs struct {
	Ms int64 `json:"ms" jsonschema:"how long to wait, in milliseconds"`
}

// AllocArgs are the alloc tool's arguments.
type AllocArgs struct {
	MiB int64 `json:"mib" jsonschema:"how many MiB to allocate and touch"`
}

var kept [][]byte

func main() {
	s := mcp.NewServer(&mcp.Implementation{Name: "podtool", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Send the text back."},
		func(_ context.Context, _ *mcp.CallToolRequest, a EchoArgs) (*mcp.CallToolResult, any, error) {
			return text("echo: " + a.Text), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "sleep", Description: "Wait, then answer."},
		func(_ context.Context, _ *mcp.CallToolRequest, a SleepArgs) (*mcp.CallToolResult, any, error) {
			// The wait does not end early on cancellation: the tests want a call that finishes.
			time.Sleep(time.Duration(a.Ms) * time.Millisecond)
			return text(fmt.Sprintf("slept %d ms", a.Ms)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "alloc", Description: "Allocate and touch memory, then answer."},
		func(_ context.Context, _ *mcp.CallToolRequest, a AllocArgs) (*mcp.CallToolResult, any, error) {
			for i := int64(0); i < a.MiB; i++ {
				b := make([]byte, 1<<20)
				for j := range b {
					b[j] = 1
				}
				kept = append(kept, b)
			}
			return text(fmt.Sprintf("holding %d MiB", len(kept))), nil, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.SetOutput(os.Stderr)
		log.Fatalf("podtool: %v", err)
	}
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}
