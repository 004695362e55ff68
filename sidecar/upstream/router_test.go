package upstream

import (
	"encoding/json"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// A tools/call's name is rewritten to the server's own name; every other
// byte of the call stays the client's.
func TestToolNameRewrite(t *testing.T) {
	set := &settings.Settings{Servers: map[string]settings.Upstream{"fs": {Name: "fs"}, "ev": {Name: "ev"}}, ServerOrder: []string{"fs", "ev"}, NamespaceSeparator: "."}
	for _, c := range []struct{ line, server, want string }{
		{`{"jsonrpc":"2.0","id":"x1","method":"tools/call","params":{"name":"fs.read_file","arguments":{"path":"/a"}}}`, "fs",
			`{"jsonrpc":"2.0","id":"x1","method":"tools/call","params":{"name":"read_file","arguments":{"path":"/a"}}}`},
		{`{"jsonrpc":"2.0","id":"x2","method":"tools/call","params":{"arguments":{"name":"fs.no"} , "name" : "ev.rent.car"}}`, "ev",
			`{"jsonrpc":"2.0","id":"x2","method":"tools/call","params":{"arguments":{"name":"fs.no"} , "name" : "rent.car"}}`},
	} {
		m, err := wire.Inspect([]byte(c.line))
		if err != nil {
			t.Fatal(err)
		}
		name, ok := toolName([]byte(c.line), m)
		if !ok {
			t.Fatalf("%s: no name", c.line)
		}
		server, tool, routed := set.Route(name)
		if !routed || server != c.server {
			t.Fatalf("%s: routed to %q", name, server)
		}
		out, _ := wire.SpliceValue([]byte(c.line), m, m.NameSpan, wire.Quote(tool))
		if got := string(out); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}

// A tools/list entry keeps every byte but its name, which is qualified.
func TestQualifyTool(t *testing.T) {
	set := &settings.Settings{Servers: map[string]settings.Upstream{"fs": {}}, NamespaceSeparator: "__"}
	entry := json.RawMessage(`{"description":"reads","name":"read_file", "inputSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`)
	got, ok := qualifyTool(entry, set.Qualified, "fs")
	want := `{"description":"reads","name":"fs__read_file", "inputSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`
	if !ok || string(got) != want {
		t.Fatalf("got %s", got)
	}
	if _, ok := qualifyTool(json.RawMessage(`{"title":"no name"}`), set.Qualified, "fs"); ok {
		t.Error("an entry without a name is qualified")
	}
}

// The router writes resultType on its own results (ping, the merged tools/list) for a request whose
// _meta names 2026-07-28 or later, and for no other.
func TestModernParams(t *testing.T) {
	for params, want := range map[string]bool{
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`: true,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2027-01-01"}}`: true,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}`: false,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":20260728}}`:     false,
		`{"_meta":{}}`: false,
		`{}`:           false,
		``:             false,
	} {
		var p []byte
		if params != "" {
			p = []byte(params)
		}
		if got := modernParams(p); got != want {
			t.Errorf("%s: %v, want %v", params, got, want)
		}
	}
}
