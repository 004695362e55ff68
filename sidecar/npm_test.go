package sidecar_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
)

// npmServer returns node and the entry point of an npm MCP server installed
// in testdata/npm.
func npmServer(t *testing.T, pkg string) (node, entry string) {
	t.Helper()
	entry, err := filepath.Abs(filepath.Join("..", "testdata", "npm", "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(entry); err != nil {
		t.Fatalf("%s is not installed (%v): run ./scripts/test.sh setup in the repository's folder (it runs npm ci --prefix testdata/npm)", pkg, err)
	}
	node, err = exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is needed for the npm MCP servers (%v): run ./scripts/test.sh setup in the repository's folder", err)
	}
	return node, entry
}

// needNPM fails the test, saying what to run, when testdata/npm does not hold the npm package
// @modelcontextprotocol/<pkg> (a client script imports it).
func needNPM(t *testing.T, pkg string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join("..", "testdata", "npm", "node_modules", "@modelcontextprotocol", pkg, "package.json")); err != nil {
		t.Fatalf("@modelcontextprotocol/%s is not installed (%v): run ./scripts/test.sh setup in the repository's folder (it runs npm ci --prefix testdata/npm)", pkg, err)
	}
}

// The reference "everything" server behind the executor: tools, progress
// notifications, resources and prompts pass through; an unlisted tool
// (get-env, which would show the server's environment) is refused.
func TestNPMEverythingServer(t *testing.T) {
	t.Parallel()
	node, entry := npmServer(t, "server-everything")
	env, err := devsetup.Build(devsetup.Options{
		Dir: t.TempDir(), Command: node, PassEnv: testPassEnv, Args: []string{entry, "stdio"},
		Tools: map[string]devsetup.Tool{
			"echo":                           {Action: "provared.data.read"},
			"get-sum":                        {Action: "provared.data.read"},
			"trigger-long-running-operation": {Action: "provared.code.run"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := launch(t, env)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	progress := make(chan float64, 16)
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			progress <- r.Params.Progress
		},
	})
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: nopReadCloser{h.out}, Writer: h.in}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 3 {
		var names []string
		for _, tl := range tools.Tools {
			names = append(names, tl.Name)
		}
		t.Errorf("tools/list shows %v", names)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "hi") {
		t.Fatalf("echo: %v %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "get-sum", Arguments: map[string]any{"a": 2, "b": 3}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "5") {
		t.Fatalf("get-sum: %v %+v", err, res)
	}
	params := &mcp.CallToolParams{Name: "trigger-long-running-operation", Arguments: map[string]any{"duration": 1, "steps": 2}}
	params.SetProgressToken("p-1")
	if res, err = cs.CallTool(ctx, params); err != nil || res.IsError {
		t.Fatalf("long-running: %v %+v", err, res)
	}
	select {
	case <-progress:
	case <-time.After(5 * time.Second):
		t.Errorf("no progress notification came through")
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "get-env", Arguments: map[string]any{}})
	if err != nil || !res.IsError || !strings.HasPrefix(res.Content[0].(*mcp.TextContent).Text, "Not taken by the executor:") {
		t.Fatalf("get-env: %v %+v", err, res)
	}
	if _, err := cs.ListResources(ctx, nil); err != nil {
		t.Errorf("resources/list: %v", err)
	}
	if _, err := cs.ListPrompts(ctx, nil); err != nil {
		t.Errorf("prompts/list: %v", err)
	}
	if err := cs.Ping(ctx, nil); err != nil {
		t.Errorf("ping: %v", err)
	}
	cs.Close()
	h.exitCode()
	h.checkBook()
	entries := readBook(t, env.BookPath)
	if s, r := len(entriesOf(entries, "stub")), len(entriesOf(entries, "refusal")); s != 3 || r != 1 {
		t.Errorf("%d stubs, %d refusals", s, r)
	}
}

// The reference filesystem server: an allowed write and read go through; a
// write the slip does not allow is refused and never happens.
func TestNPMFilesystemServer(t *testing.T) {
	t.Parallel()
	node, entry := npmServer(t, "server-filesystem")
	files := t.TempDir()
	env, err := devsetup.Build(devsetup.Options{
		Dir: t.TempDir(), Command: node, PassEnv: testPassEnv, Args: []string{entry, files},
		Tools: map[string]devsetup.Tool{
			"read_text_file": {Action: "provared.data.read"},
			"write_file":     {Action: "provared.data.change"},
			"move_file":      {Action: "provared.data.delete"},
		},
		Actions: []string{"provared.data.read", "provared.data.change"},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := launch(t, env)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs := h.client(ctx)
	path := filepath.Join(files, "note.txt")
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": path, "content": "kept"}}); err != nil || res.IsError {
		t.Fatalf("write_file: %v %+v", err, res)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_text_file", Arguments: map[string]any{"path": path}})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "kept" {
		t.Fatalf("read_text_file: %v %+v", err, res)
	}
	moved := filepath.Join(files, "moved.txt")
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "move_file", Arguments: map[string]any{"source": path, "destination": moved}})
	if err != nil || !res.IsError || res.Meta["red.prova/refused"] != "not-in-slip" {
		t.Fatalf("move_file: %v %+v", err, res)
	}
	cs.Close()
	h.exitCode()
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the refused move happened: %v", err)
	}
	if _, err := os.Stat(moved); err == nil {
		t.Errorf("the refused move happened")
	}
	h.checkBook()
	entries := readBook(t, env.BookPath)
	if s, r := len(entriesOf(entries, "stub")), len(entriesOf(entries, "refusal")); s != 2 || r != 1 {
		t.Errorf("%d stubs, %d refusals", s, r)
	}
}
