package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/sidecar/approval"
)

// hostileServerEnv makes this test binary a tool server whose tool names
// and errors carry terminal escapes (it answers initialize and tools/list
// by hand, as a hostile server may).
const hostileServerEnv = "MCP_EXECUTOR_TEST_HOSTILE_SERVER"

// hostileName is a tool name that clears the screen, rings the bell, sets
// the window title and turns the rest of the line around.
const hostileName = "evil\x1b[2J\x07\x1b]0;owned\x07\u202eexe.txt\u009b"

func init() {
	if os.Getenv(hostileServerEnv) == "1" {
		runHostileServer()
		os.Exit(0)
	}
}

func runHostileServer() {
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil || len(m.ID) == 0 {
			continue
		}
		var result any
		switch m.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "hostile\x1b[5m", "version": "1"}}
		case "tools/list":
			result = map[string]any{"tools": []any{
				map[string]any{"name": hostileName, "description": "desc\x1b[31m\x07", "inputSchema": map[string]any{"type": "object"}},
				map[string]any{"name": "plain", "inputSchema": map[string]any{"type": "object"}},
			}}
		default:
			continue
		}
		line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
		fmt.Printf("%s\n", line)
	}
}

// terminalBytes are what no output may hold raw: ESC, BEL, the C1 CSI and
// a bidi override.
var terminalBytes = []string{"\x1b", "\x07", "\u009b", "\u202e"}

func holdsTerminalBytes(s string) string {
	for _, b := range terminalBytes {
		if strings.Contains(s, b) {
			return b
		}
	}
	return ""
}

// `tools` lists a real server whose tool is named with terminal escapes:
// the table and the JSON show them escaped.
func TestToolsEscapesServerText(t *testing.T) {
	exe := binary(t)
	env, err := devsetup.Build(devsetup.Options{
		Dir:     t.TempDir(),
		Command: testServerCommand(t),
		Env:     map[string]map[string]any{hostileServerEnv: {"value": "1"}},
		Tools:   map[string]devsetup.Tool{"plain": {Action: "provared.data.read"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = exe
	code, out, errOut := runBinary(t, "", "tools", "--config", env.SettingsPath)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if b := holdsTerminalBytes(out); b != "" {
		t.Fatalf("tools printed %q raw:\n%q", b, out)
	}
	if !strings.Contains(out, `evil\x1b[2J\x07\x1b]0;owned\x07\u202eexe.txt\u009b`) || !strings.Contains(out, "plain") {
		t.Fatalf("tools output:\n%s", out)
	}
	code, out, errOut = runBinary(t, "", "tools", "--config", env.SettingsPath, "--json")
	if code != ExitOK {
		t.Fatalf("--json: exit %d\n%s\n%s", code, out, errOut)
	}
	if b := holdsTerminalBytes(out); b != "" {
		t.Fatalf("tools --json printed %q raw:\n%q", b, out)
	}
	var res struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Tools) != 2 || res.Tools[0].Name != hostileName {
		t.Fatalf("--json: %v %+v\n%s", err, res, out)
	}
}

// `approve` shows a request whose tool name and arguments carry terminal
// escapes with them escaped, and answers it.
func TestApproveEscapesRequestText(t *testing.T) {
	config, queue := approveFolder(t)
	now := time.Now().UTC().Truncate(time.Millisecond)
	r := &approval.Request{ID: canon.NewID(), Tool: hostileName, Action: "files.write", Amount: &record.Amount{Unit: "files", Value: 1},
		Arguments: canon.Fingerprint([]byte(`{}`)), RequestedAt: now, ExpiresAt: now.Add(time.Hour),
		Shown: json.RawMessage("{\"path\":\"a\u202eb\u009b2J\x7f\"}")}
	data, err := approval.FileFor(r).Encode()
	if err != nil {
		t.Fatal(err)
	}
	if err := approval.WriteFileAtomic(queue, approval.FileName(r.ID), data); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runBinary(t, "y\n", "approve", "--config", config)
	if code != ExitOK || !strings.Contains(out, "approved request "+r.ID) {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if b := holdsTerminalBytes(out); b != "" || strings.Contains(out, "\x7f") {
		t.Fatalf("approve printed %q raw:\n%q", b, out)
	}
	if !strings.Contains(out, `a\u202eb\u009b2J\x7f`) {
		t.Fatalf("approve output:\n%s", out)
	}
	for _, args := range [][]string{{"--json"}, {"--id", r.ID, "--yes", "--json"}, {"--id", r.ID, "--yes"}} {
		_, out, errOut := runBinary(t, "", append([]string{"approve", "--config", config}, args...)...)
		if b := holdsTerminalBytes(out + errOut); b != "" {
			t.Fatalf("approve %v printed %q raw:\n%q\n%q", args, b, out, errOut)
		}
	}
}
