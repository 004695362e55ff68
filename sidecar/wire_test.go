package sidecar_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// The answer to the client is the server's own bytes with the client's id
// spliced in: spacing, member order, number spellings and escapes stay.
func TestIDSplicingKeepsServerBytes(t *testing.T) {
	t.Parallel()
	h := startWith(t, "raw", baseOptions())
	h.send(`{"jsonrpc":"2.0","id":"init-1","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if got := h.recv(); !strings.Contains(got, `"id":"init-1"`) {
		t.Fatalf("initialize answer %s", got)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	for _, id := range []string{`7`, `"seven"`, `9007199254740991`} {
		h.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
		got := h.recv()
		want := `{ "result" : ` + rawResult + ` , "jsonrpc":"2.0",  "id" :` + id + ` }`
		if got != want {
			t.Errorf("id %s:\n got %s\nwant %s", id, got, want)
		}
	}

	// tools/list: the unlisted tool is taken out, everything else as written.
	h.send(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	got := h.recv()
	want := `{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"},"x":1.0},{"name":"order","inputSchema":{"type":"object"}}],"nextCursor":"c 1"}}`
	if got != want {
		t.Errorf("tools/list:\n got %s\nwant %s", got, want)
	}

	// Other requests pass through under our id and come back under theirs.
	h.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	if got := h.recv(); got != `{"jsonrpc":"2.0","id":"p","result":{}}` {
		t.Errorf("ping answer %s", got)
	}
	h.stop()
	for _, m := range serverLines(t, h.record) {
		if id, ok := m["id"]; ok {
			s, _ := id.(string)
			if !strings.HasPrefix(s, "provared-") {
				t.Errorf("the server saw a client id %v", id)
			}
		}
	}
	stubs := entriesOf(readBook(t, h.env.BookPath), "stub")
	if len(stubs) != 3 {
		t.Errorf("%d stubs for 3 calls", len(stubs))
	}
	h.checkBook()
}

// Lines that are not acceptable messages are answered with a JSON-RPC
// error and go no further; notifications outside notifications/… are
// dropped.
func TestStrictLinesGoNoFurther(t *testing.T) {
	t.Parallel()
	h := startWith(t, "raw", baseOptions())
	cases := []struct {
		line string
		code float64
		id   any
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":1,"a":2}}}`, -32600, float64(1)},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"order","arguments":{"total":9007199254740992}}}`, -32600, float64(2)},
		{`[{"jsonrpc":"2.0","id":3,"method":"ping"}]`, -32600, nil},
		{`{"jsonrpc":"2.0","id":4,"method":"tools/call"`, -32700, nil},
		{"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\",\"x\":\"\xff\"}", -32700, nil},
		{`{"jsonrpc":"1.0","id":6,"method":"ping"}`, -32600, float64(6)},
	}
	for _, c := range cases {
		h.send(c.line)
		var m struct {
			ID    any `json:"id"`
			Error struct {
				Code float64 `json:"code"`
			} `json:"error"`
		}
		got := h.recv()
		if err := json.Unmarshal([]byte(got), &m); err != nil {
			t.Fatalf("%s: %v", got, err)
		}
		if m.Error.Code != c.code || m.ID != c.id {
			t.Errorf("%s: answer %s", c.line, got)
		}
	}
	// A tools/call sent as a notification, and a vendor notification, are dropped.
	h.send(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{}}}`)
	h.send(`{"jsonrpc":"2.0","method":"vendor/thing","params":{}}`)
	h.send(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
	h.send(`{"jsonrpc":"2.0","id":"last","method":"ping"}`)
	if got := h.recv(); !strings.Contains(got, `"id":"last"`) {
		t.Errorf("ping answer %s", got)
	}
	h.stop()
	if got := receivedCalls(t, h.record); len(got) != 0 {
		t.Errorf("the server received tool calls %v", got)
	}
	var methods []string
	for _, m := range serverLines(t, h.record) {
		if s, ok := m["method"].(string); ok {
			methods = append(methods, s)
		}
	}
	if strings.Join(methods, ",") != "notifications/roots/list_changed,ping" {
		t.Errorf("the server read %v", methods)
	}
}
