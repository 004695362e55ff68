package sidecar_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
)

// baseTools are the rules most tests run with.
func baseTools() map[string]devsetup.Tool {
	return map[string]devsetup.Tool{
		"echo":      {Action: "provared.data.read"},
		"order":     {Action: "supplies.order", Amount: map[string]any{"unit": "GBP", "pointer": "/total"}},
		"send":      {Action: "provared.message.send", Amount: map[string]any{"unit": "messages", "count": "/recipients"}},
		"slow":      {Action: "provared.data.read"},
		"fail":      {Action: "provared.data.read"},
		"exit":      {Action: "provared.data.read"},
		"notinslip": {Action: "other.action"},
	}
}

func baseOptions() devsetup.Options {
	return devsetup.Options{
		Tools:   baseTools(),
		Actions: []string{"provared.data.read", "supplies.order", "provared.message.send"},
	}
}

// Each allowed call gets exactly one stub, countersigned, with the labels
// the architecture names; the answer is the server's; the book checks
// intact; the copy holds a sent and a receipt line for each call.
func TestAllowedCallsGetOneStubEach(t *testing.T) {
	t.Parallel()
	h := startWith(t, "sdk", baseOptions())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := h.client(ctx)

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	got := strings.Join(names, ",")
	for _, hidden := range []string{"unlisted_tool", "Bad_Case"} {
		if strings.Contains(got, hidden) {
			t.Errorf("tools/list shows %s, which no rule names: %s", hidden, got)
		}
	}
	if !strings.Contains(got, "echo") || !strings.Contains(got, "order") {
		t.Errorf("tools/list lost listed tools: %s", got)
	}

	calls := []struct {
		name string
		args map[string]any
	}{
		{"echo", map[string]any{"text": "one"}},
		{"order", map[string]any{"total": 45, "item": "paper"}},
		{"send", map[string]any{"recipients": []string{"a", "b", "c"}}},
		{"fail", nil},
	}
	for _, c := range calls {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.name, Arguments: c.args})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if c.name == "fail" {
			if !res.IsError || text != "it failed" {
				t.Errorf("fail: got %v %q", res.IsError, text)
			}
			continue
		}
		if res.IsError || !strings.HasPrefix(text, c.name+" ") {
			t.Errorf("%s: got %v %q", c.name, res.IsError, text)
		}
	}
	cs.Close()
	if code := h.exitCode(); code != 0 {
		t.Errorf("exit code %d", code)
	}

	if got := receivedCalls(t, h.record); strings.Join(got, ",") != "echo,order,send,fail" {
		t.Errorf("the server received %v", got)
	}
	h.checkBook()
	entries := readBook(t, h.env.BookPath)
	stubs := entriesOf(entries, "stub")
	if len(stubs) != len(calls) {
		t.Fatalf("%d stubs for %d calls", len(stubs), len(calls))
	}
	wantAmount := []map[string]any{nil, {"unit": "GBP", "value": float64(45)}, {"unit": "messages", "value": float64(3)}, nil}
	for i, s := range stubs {
		c := s.Content
		if c["seq"].(float64) != float64(i) {
			t.Errorf("stub %d has seq %v", i, c["seq"])
		}
		if c["with"] != "executor" {
			t.Errorf("stub %d with %v", i, c["with"])
		}
		if s.Countersignature == nil || s.Countersignature["stub"] != s.Fingerprint {
			t.Errorf("stub %d is not countersigned", i)
		}
		if wa := wantAmount[i]; wa != nil {
			a, _ := c["amount"].(map[string]any)
			if a["unit"] != wa["unit"] || a["value"] != wa["value"] {
				t.Errorf("stub %d amount %v, want %v", i, a, wa)
			}
		}
		d := detailsOf(c)
		if d["provared.tool-name"] != fp(calls[i].name) {
			t.Errorf("stub %d tool-name fingerprint wrong", i)
		}
		if d["executor.call"] == "" || d["executor.call"] != d["provared.request-id"] {
			t.Errorf("stub %d call/request-id: %v", i, d)
		}
		if d["provared.tool-result"] == "" {
			t.Errorf("stub %d names no tool result: %v", i, d)
		}
		args := calls[i].args
		wantArgs := "{}"
		if args != nil {
			b, _ := canon.JCS(mustJSON(t, args))
			wantArgs = string(b)
		}
		if d["provared.arguments"] != fp(wantArgs) {
			t.Errorf("stub %d arguments fingerprint %s, want that of %s", i, d["provared.arguments"], wantArgs)
		}
	}
	lines := readCopy(t, h.env.CopyPath, h.env.CopyKey, "test executor")
	kinds := copyKinds(lines)
	if kinds[copylog.KindSent] != len(calls) || kinds[copylog.KindReceipt] != len(calls) {
		t.Errorf("copy kinds %v", kinds)
	}
	// The server saw the executor's call id in _meta, and our request id.
	for _, m := range serverLines(t, h.record) {
		if m["method"] != "tools/call" {
			continue
		}
		id, _ := m["id"].(string)
		if !strings.HasPrefix(id, "provared-") {
			t.Errorf("the server saw id %v", m["id"])
		}
		meta := m["params"].(map[string]any)["_meta"].(map[string]any)
		if meta["red.prova/call-id"] != id {
			t.Errorf("the server saw _meta %v for id %s", meta, id)
		}
	}
}
