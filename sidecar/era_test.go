package sidecar_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
)

// The results the executor writes itself take the form of the era the request speaks: a 2026-07-28
// request (its _meta names the revision) gets resultType "complete" on a refusal and on the answer of
// a call still waiting for a person; a 2025-11-25 request gets them without (as before).
func TestOwnResultsInTheClientsEra(t *testing.T) {
	t.Parallel()
	o := baseOptions()
	o.Tools["held"] = devsetup.Tool{Action: "provared.data.read", Approve: true}
	o.Settings = map[string]any{"approvals": map[string]any{"pendingAfter": 300, "elicit": false}}
	h := startWith(t, "sdk", o)
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	cases := []struct {
		name, line string
		modern     bool
	}{
		{"a refusal, 2026-07-28", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"unlisted_tool","arguments":{},` + meta + `}}`, true},
		{"a call waiting for a person, 2026-07-28", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"held","arguments":{},` + meta + `}}`, true},
		{"a refusal, 2025-11-25", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"unlisted_tool","arguments":{}}}`, false},
		{"a call waiting for a person, 2025-11-25", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"held","arguments":{}}}`, false},
	}
	for _, c := range cases {
		h.send(c.line)
		answer := h.recv()
		var m struct {
			Result map[string]json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(answer), &m); err != nil || m.Result == nil {
			t.Fatalf("%s: %v %s", c.name, err, answer)
		}
		rt, has := m.Result["resultType"]
		switch {
		case c.modern && string(rt) != `"complete"`:
			t.Errorf("%s: resultType %s: %s", c.name, rt, answer)
		case !c.modern && has:
			t.Errorf("%s: a resultType in the 2025-11-25 era: %s", c.name, answer)
		case string(m.Result["isError"]) != "true" || !strings.Contains(answer, `"content":[`):
			t.Errorf("%s: not the executor's tool result: %s", c.name, answer)
		}
	}
}
