package sidecar_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/sidecar/contentrules"
)

// The seed's own example against the real @modelcontextprotocol/server-filesystem: a write_file that
// switches the scan setting on in settings.json is refused and the file on disk stays as it was; one that
// keeps it off is written; edit_file on settings.json (a partial edit the executor cannot judge) is
// refused outright.
func TestContentRulesWithFilesystemServer(t *testing.T) {
	t.Parallel()
	const rules = `{
  "version": 1,
  "rules": [
    {
      "name": "the scan setting in settings.json stays off",
      "tool": "write_file",
      "when": { "pointer": "/path", "matches": "**settings.json" },
      "content": { "pointer": "/content", "as": "json" },
      "test": { "pointer": "/scan", "equals": false, "orAbsent": true }
    },
    {
      "name": "settings.json is written whole, never edited in part",
      "tool": ["edit_file"],
      "when": { "pointer": "/path", "matches": "**settings.json" }
    }
  ]
}`
	rs, err := contentrules.Parse([]byte(rules))
	if err != nil {
		t.Fatal(err)
	}
	node, entry := npmServer(t, "server-filesystem")
	files := t.TempDir()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rules.json"), []byte(rules), 0o600); err != nil {
		t.Fatal(err)
	}
	env, err := devsetup.Build(devsetup.Options{
		Dir: dir, Command: node, PassEnv: testPassEnv, Args: []string{entry, files},
		Tools: map[string]devsetup.Tool{
			"write_file": {Action: "provared.data.change"},
			"edit_file":  {Action: "provared.data.change"},
		},
		Settings: map[string]any{"contentRules": "rules.json"},
		Software: []map[string]any{{"name": "Content rules of test executor", "sha256": rs.Fingerprint()}},
	})
	if err != nil {
		t.Fatal(err)
	}
	settingsPath := filepath.Join(files, "settings.json")
	const original = `{"label":"old","scan":false}`
	if err := os.WriteFile(settingsPath, []byte(original), 0o600); err != nil {
		t.Fatal(err)
	}
	h := launch(t, env)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs := h.client(ctx)

	// Switching the scan on: refused by the first rule, never reaches the server.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_file",
		Arguments: map[string]any{"path": settingsPath, "content": `{"label":"new","scan":true}`}})
	if err != nil || !res.IsError || res.Meta["red.prova/refused"] != "content-rule" ||
		res.Meta["red.prova/rule"] != "the scan setting in settings.json stays off" {
		t.Fatalf("a write that switches the scan on: %v %+v", err, res)
	}
	if b, _ := os.ReadFile(settingsPath); string(b) != original {
		t.Fatalf("the refused write changed the file: %s", b)
	}
	// A partial edit: refused outright by the second rule.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "edit_file", Arguments: map[string]any{"path": settingsPath,
		"edits": []any{map[string]any{"oldText": `"scan":false`, "newText": `"scan":true`}}}})
	if err != nil || !res.IsError || res.Meta["red.prova/rule"] != "settings.json is written whole, never edited in part" {
		t.Fatalf("edit_file on settings.json: %v %+v", err, res)
	}
	if b, _ := os.ReadFile(settingsPath); string(b) != original {
		t.Fatalf("the refused edit changed the file: %s", b)
	}
	// Keeping it off: written.
	const kept = `{"label":"new","scan":false}`
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": settingsPath, "content": kept}})
	if err != nil || res.IsError {
		t.Fatalf("a write that keeps the scan off: %v %+v", err, res)
	}
	if b, _ := os.ReadFile(settingsPath); string(b) != kept {
		t.Fatalf("the allowed write did not happen: %s", b)
	}
	cs.Close()
	h.exitCode()
	h.checkBook()
	entries := readBook(t, env.BookPath)
	stubs, refusals := entriesOf(entries, "stub"), entriesOf(entries, "refusal")
	if len(stubs) != 1 || len(refusals) != 2 {
		t.Fatalf("%d stubs and %d refusals, want 1 and 2", len(stubs), len(refusals))
	}
	if got := detailsOf(stubs[0].Content)["executor.rules"]; got != rs.Fingerprint() {
		t.Errorf("the stub names rules %q, want %q", got, rs.Fingerprint())
	}
}
