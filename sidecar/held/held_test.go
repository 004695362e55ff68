package held

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/sidecar/approval"
	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// TestStripInput: the executor's answer (and the requestState naming its
// request) leave the retried call; the server's own inputResponses and
// anything else stay, the arguments byte for byte.
func TestStripInput(t *testing.T) {
	cases := []struct {
		name, params, id string
		want             map[string]string // member -> its JSON after stripping ("" = absent)
	}{
		{"ours only", `{"name":"w","arguments":{"n":1.50},"inputResponses":{"red.prova/approval":{"action":"accept","content":{"approve":true}}},"requestState":"R1"}`, "R1",
			map[string]string{"arguments": `{"n":1.50}`, "inputResponses": "", "requestState": ""}},
		{"the server's kept", `{"name":"w","inputResponses":{"q1":{"action":"accept"},"red.prova/approval":{"action":"decline"}},"requestState":"R1"}`, "R1",
			map[string]string{"inputResponses": `{"q1":{"action":"accept"}}`, "requestState": ""}},
		{"another requestState kept", `{"name":"w","inputResponses":{"red.prova/approval":{"action":"decline"}},"requestState":"server-state"}`, "R1",
			map[string]string{"inputResponses": "", "requestState": `"server-state"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			line := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":` + c.params + `}`)
			m, err := wire.Inspect(line)
			if err != nil {
				t.Fatal(err)
			}
			out, err := StripInput(line, m, c.id)
			if err != nil {
				t.Fatal(err)
			}
			m2, err := wire.Inspect(out)
			if err != nil {
				t.Fatalf("the stripped line is no message: %v\n%s", err, out)
			}
			var p map[string]json.RawMessage
			if err := json.Unmarshal(m2.Params, &p); err != nil {
				t.Fatal(err)
			}
			if string(p["name"]) != `"w"` || string(m2.ID) != "7" {
				t.Fatalf("the call changed: %s", out)
			}
			for k, want := range c.want {
				if got := string(p[k]); got != want {
					t.Errorf("%s: %q, want %q", k, got, want)
				}
			}
			if strings.Contains(string(out), approval.InputKey) {
				t.Errorf("the executor's answer is still in %s", out)
			}
		})
	}
}

// FuzzStripInput: on any tools/call line, StripInput fails or gives a line
// that is still one acceptable message without the executor's answer.
func FuzzStripInput(f *testing.F) {
	f.Add([]byte(`{"name":"w","inputResponses":{"red.prova/approval":{"action":"accept"}},"requestState":"R"}`))
	f.Add([]byte(`{"inputResponses":{"q":1,"red.prova/approval":null}}`))
	f.Add([]byte(`{"inputResponses":[]}`))
	f.Fuzz(func(t *testing.T, params []byte) {
		line := append(append([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`), params...), '}')
		m, err := wire.Inspect(line)
		if err != nil || m.Params == nil {
			return
		}
		out, err := StripInput(line, m, "R")
		if err != nil {
			return
		}
		m2, err := wire.Inspect(out)
		if err != nil {
			t.Fatalf("stripping made an unacceptable message: %v\n%s", err, out)
		}
		if _, found, _ := wire.Pointer(m2.Params, "/inputResponses/red.prova~1approval"); found {
			t.Fatalf("the executor's answer is still there: %s", out)
		}
	})
}

// TestNoteInitialize: which clients are asked by elicitation/create.
func TestNoteInitialize(t *testing.T) {
	cases := []struct {
		params string
		elicit bool
	}{
		{`{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}}}`, true},
		{`{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"form":{}}}}`, true},
		{`{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"url":{}}}}`, false},
		{`{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"form":{},"url":{}}}}`, true},
		{`{"protocolVersion":"2025-11-25","capabilities":{}}`, false},
		{`{"protocolVersion":"2025-06-18"}`, false},
	}
	for _, c := range cases {
		cl := NewClient(nil, "ask-", nil, slog.New(slog.DiscardHandler))
		cl.NoteInitialize([]byte(c.params))
		if cl.elicit != c.elicit {
			t.Errorf("%s: elicit %v, want %v", c.params, cl.elicit, c.elicit)
		}
	}
}
