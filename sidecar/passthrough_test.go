package sidecar_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
)

// Past denialsPerHour a call is still refused, but no denial is written,
// and the copy has no line of its own for it either: one denials-folded
// line counts them (written within a minute, or at the stop).
func TestDenialsPerHour(t *testing.T) {
	t.Parallel()
	o := baseOptions()
	o.Settings = map[string]any{"denialsPerHour": 1}
	h := startWith(t, "sdk", o)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := h.client(ctx)
	for i := 0; i < 3; i++ {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "unlisted_tool", Arguments: map[string]any{}})
		if err != nil || !res.IsError {
			t.Fatalf("call %d: %v %+v", i, err, res)
		}
		_, named := res.Meta["red.prova/denial"]
		if named != (i == 0) {
			t.Errorf("call %d: _meta %v", i, res.Meta)
		}
	}
	cs.Close()
	h.exitCode()
	if n := len(entriesOf(readBook(t, h.env.BookPath), "refusal")); n != 1 {
		t.Errorf("%d denials written", n)
	}
	var den, folded []copylog.Line
	for _, l := range readCopy(t, h.env.CopyPath, h.env.CopyKey, "test executor") {
		switch l.Kind {
		case copylog.KindDenial:
			den = append(den, l)
		case copylog.KindDenialsFolded:
			folded = append(folded, l)
		}
	}
	if len(den) != 1 || den[0].Refusal == "" {
		t.Errorf("copy denial lines %+v, want the one whose denial is in the book", den)
	}
	if len(folded) != 1 || folded[0].Count != 2 {
		t.Errorf("copy denials-folded lines %+v, want one counting 2", folded)
	}
	if got := receivedCalls(t, h.record); len(got) != 0 {
		t.Errorf("the server received %v", got)
	}
}

// With unlisted "forward", a call to a tool no rule names is sent on with
// no receipt and no denial, and tools/list shows it when hideUnlisted is off.
func TestUnlistedForward(t *testing.T) {
	t.Parallel()
	o := baseOptions()
	o.Settings = map[string]any{"unlisted": "forward", "hideUnlisted": false}
	h := startWith(t, "sdk", o)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := h.client(ctx)
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	shown := false
	for _, tl := range tools.Tools {
		shown = shown || tl.Name == "unlisted_tool"
	}
	if !shown {
		t.Errorf("tools/list hides unlisted_tool with hideUnlisted off")
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "unlisted_tool", Arguments: map[string]any{"x": 1}})
	if err != nil || res.IsError || !strings.HasPrefix(res.Content[0].(*mcp.TextContent).Text, "unlisted_tool") {
		t.Fatalf("%v %+v", err, res)
	}
	cs.Close()
	h.exitCode()
	if got := receivedCalls(t, h.record); len(got) != 1 {
		t.Errorf("the server received %v", got)
	}
	if n := len(readBook(t, h.env.BookPath)); n != 1 {
		t.Errorf("the book holds %d entries; only the slip was expected", n)
	}
}

// server/discover before (or instead of) initialize passes through, and a
// multi round-trip tools/call (2026-07-28: input_required, then the retry
// with inputResponses) is two calls with one receipt each.
func TestDiscoverAndMultiRoundTrip(t *testing.T) {
	t.Parallel()
	o := baseOptions()
	o.Tools["ask"] = devsetup.Tool{Action: "provared.data.read"}
	h := startWith(t, "raw", o)
	h.send(`{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{}}`)
	if got := h.recv(); got != `{"jsonrpc":"2.0","id":"d","result":{}}` {
		t.Errorf("server/discover answer %s", got)
	}
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":{"text":"a"}}}`)
	first := h.recv()
	if !strings.Contains(first, `"resultType":"input_required"`) || !strings.HasPrefix(first, `{"jsonrpc":"2.0","id":1,`) {
		t.Fatalf("first answer %s", first)
	}
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask","arguments":{"text":"a"},"inputResponses":{"q1":{"action":"accept","content":{"ok":true}}},"requestState":"s1"}}`)
	second := h.recv()
	if !strings.Contains(second, `"done"`) || !strings.HasPrefix(second, `{"jsonrpc":"2.0","id":2,`) {
		t.Fatalf("second answer %s", second)
	}
	h.stop()
	h.checkBook()
	stubs := entriesOf(readBook(t, h.env.BookPath), "stub")
	if len(stubs) != 2 {
		t.Fatalf("%d stubs", len(stubs))
	}
	a, b := detailsOf(stubs[0].Content), detailsOf(stubs[1].Content)
	if a["provared.arguments"] != b["provared.arguments"] || a["provared.tool-result"] == b["provared.tool-result"] {
		t.Errorf("details %v / %v", a, b)
	}
	if got := receivedCalls(t, h.record); len(got) != 2 {
		t.Errorf("the server received %v", got)
	}
}

// The server's own request to the client, and the client's answer to it,
// pass through unchanged (the server's id is the server's).
func TestServerRequestsPassThrough(t *testing.T) {
	t.Parallel()
	o := baseOptions()
	o.Tools["roots"] = devsetup.Tool{Action: "provared.data.read"}
	h := startWith(t, "raw", o)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"roots","arguments":{}}}`)
	if got := h.recv(); got != `{"jsonrpc":"2.0","id":"srv-1","method":"roots/list"}` {
		t.Fatalf("server request %s", got)
	}
	answer := `{"jsonrpc":"2.0","id":"srv-1","result":{"roots":[]}}`
	h.send(answer)
	got := h.recv()
	if !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":1,`) || !strings.Contains(got, `{\"roots\":[]}`) {
		t.Fatalf("tool answer %s", got)
	}
	h.stop()
	if n := len(entriesOf(readBook(t, h.env.BookPath), "stub")); n != 1 {
		t.Errorf("%d stubs", n)
	}
}

// A request other than a tool call that the server never answers is
// forgotten after 1,000 such pile up, the oldest first: its answer, if it
// ever comes, answers nothing the executor waits for and is dropped.
func TestUnansweredRequestsAreForgotten(t *testing.T) {
	t.Parallel()
	h := startWith(t, "raw", baseOptions())
	// 1,000 requests the server holds, and the flush that makes 1,001.
	const n = 1000
	for i := 1; i <= n; i++ {
		h.send(`{"jsonrpc":"2.0","id":` + itoa(i) + `,"method":"later"}`)
	}
	h.send(`{"jsonrpc":"2.0","id":"f","method":"flush"}`)
	for i := 2; i <= n; i++ {
		want := `{"jsonrpc":"2.0","id":` + itoa(i) + `,"result":{"late":true}}`
		if got := h.recv(); got != want {
			t.Fatalf("answer %d: %s", i, got)
		}
	}
	if got := h.recv(); got != `{"jsonrpc":"2.0","id":"f","result":{}}` {
		t.Errorf("flush answer %s", got)
	}
	h.stop()
	if !strings.Contains(h.stderr.String(), "an answer to no request the executor is waiting for") {
		t.Errorf("the forgotten request's answer was not logged as dropped")
	}
}

// With callIdInMeta off the server sees the call's _meta as the client
// wrote it; the stub still names the call id.
func TestCallIDInMetaOff(t *testing.T) {
	t.Parallel()
	o := baseOptions()
	o.Settings = map[string]any{"callIdInMeta": false}
	h := startWith(t, "raw", o)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}}`)
	h.recv()
	h.stop()
	for _, m := range serverLines(t, h.record) {
		if m["method"] == "tools/call" {
			meta := m["params"].(map[string]any)["_meta"].(map[string]any)
			if _, ok := meta["red.prova/call-id"]; ok || len(meta) != 1 {
				t.Errorf("the server saw _meta %v", meta)
			}
		}
	}
	stubs := entriesOf(readBook(t, h.env.BookPath), "stub")
	if len(stubs) != 1 {
		t.Fatalf("%d stubs", len(stubs))
	}
	d := detailsOf(stubs[0].Content)
	if d["executor.call"] == "" || d["provared.trace-id"] != fp("4bf92f3577b34da6a3ce929d0e0e4736") {
		t.Errorf("details %v", d)
	}
}

// A call whose _meta cannot take the call id (it is not an object) is sent
// as the client wrote it, and the executor says so in its log.
func TestCallIDInMetaNotSettable(t *testing.T) {
	t.Parallel()
	h := startWith(t, "raw", baseOptions())
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":5}}`)
	h.recv()
	h.stop()
	calls := 0
	for _, m := range serverLines(t, h.record) {
		if m["method"] == "tools/call" {
			calls++
			if meta := m["params"].(map[string]any)["_meta"]; meta != float64(5) {
				t.Errorf("the server saw _meta %v", meta)
			}
		}
	}
	if calls != 1 {
		t.Fatalf("the server read %d calls", calls)
	}
	if !strings.Contains(h.stderr.String(), "the call id could not be put in the call's _meta") {
		t.Errorf("no warning in the log:\n%s", h.stderr.String())
	}
}
