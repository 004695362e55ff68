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

// Every refusal path: the model gets a tool error that begins "Not taken by
// the executor:", _meta says why, a signed denial is in the book, the copy
// has a denial line, and the server never received the call.
func TestRefusalsNeverReachTheServer(t *testing.T) {
	t.Parallel()
	past := time.Now().Add(-48 * time.Hour)
	cases := []struct {
		name    string
		opts    func(*devsetup.Options)
		before  []mcp.CallToolParams // allowed calls first
		call    mcp.CallToolParams
		refused string
		code    string
		reason  string
		action  string
	}{
		{name: "unlisted tool", call: mcp.CallToolParams{Name: "unlisted_tool", Arguments: map[string]any{}},
			refused: "unlisted", code: "unlisted", reason: "other", action: "executor.unlisted"},
		{name: "amount unreadable", call: mcp.CallToolParams{Name: "order", Arguments: map[string]any{"total": "forty"}},
			refused: "amount-unreadable", code: "amount-unreadable", reason: "other", action: "supplies.order"},
		{name: "amount missing", call: mcp.CallToolParams{Name: "order", Arguments: map[string]any{"item": "paper"}},
			refused: "amount-unreadable", code: "amount-unreadable", reason: "other", action: "supplies.order"},
		{name: "amount not whole", call: mcp.CallToolParams{Name: "order", Arguments: map[string]any{"total": 4.5}},
			refused: "amount-unreadable", code: "amount-unreadable", reason: "other", action: "supplies.order"},
		{name: "action not in slip", call: mcp.CallToolParams{Name: "notinslip", Arguments: map[string]any{}},
			refused: "not-in-slip", code: "action-not-allowed", reason: "not-in-slip", action: "other.action"},
		{name: "outside valid time", opts: func(o *devsetup.Options) { o.ValidFrom, o.ValidUntil = past.Add(-time.Hour), past },
			call:    mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "late"}},
			refused: "outside-valid-time", code: "outside-valid-time", reason: "outside-valid-time", action: "provared.data.read"},
		{name: "over limit", opts: func(o *devsetup.Options) {
			o.Limits = []map[string]any{{"action": "supplies.order", "max": 100, "unit": "GBP"}}
		},
			before:  []mcp.CallToolParams{{Name: "order", Arguments: map[string]any{"total": 60}}},
			call:    mcp.CallToolParams{Name: "order", Arguments: map[string]any{"total": 41}},
			refused: "over-limit", code: "over-limit", reason: "over-limit", action: "supplies.order"},
		{name: "needs approval", opts: func(o *devsetup.Options) {
			// Held for the passkey's approval (passkey_e2e_test.go) until it
			// expires into the refusal.
			o.Requires = []map[string]any{{"need": "approval", "action": "provared.data.read"}}
			o.Settings = map[string]any{"approvals": map[string]any{"timeout": 1000}}
		},
			call:    mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}},
			refused: "needs-approval", code: "approval-missing", reason: "needs-approval", action: "provared.data.read"},
		{name: "over count", opts: func(o *devsetup.Options) {
			o.Limits = []map[string]any{{"action": "provared.message.send", "count": 1}}
		},
			before:  []mcp.CallToolParams{{Name: "send", Arguments: map[string]any{"recipients": []string{"a"}}}},
			call:    mcp.CallToolParams{Name: "send", Arguments: map[string]any{"recipients": []string{"b"}}},
			refused: "over-limit", code: "over-count-limit", reason: "over-limit", action: "provared.message.send"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := baseOptions()
			if tc.opts != nil {
				tc.opts(&o)
			}
			h := startWith(t, "sdk", o)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cs := h.client(ctx)
			for _, b := range tc.before {
				res, err := cs.CallTool(ctx, &b)
				if err != nil || res.IsError {
					t.Fatalf("allowed call %s: %v %+v", b.Name, err, res)
				}
			}
			res, err := cs.CallTool(ctx, &tc.call)
			if err != nil {
				t.Fatal(err)
			}
			text := res.Content[0].(*mcp.TextContent).Text
			if !res.IsError || !strings.HasPrefix(text, "Not taken by the executor: ") {
				t.Errorf("result %v %q", res.IsError, text)
			}
			if strings.Contains(text, "forty") || strings.Contains(text, "500") {
				t.Errorf("the refusal text holds an argument value: %q", text)
			}
			meta := res.Meta
			if meta["red.prova/refused"] != tc.refused {
				t.Errorf("refused %v, want %s", meta["red.prova/refused"], tc.refused)
			}
			codes, _ := meta["red.prova/codes"].([]any)
			found := false
			for _, c := range codes {
				found = found || c == tc.code
			}
			if !found {
				t.Errorf("codes %v lack %s", codes, tc.code)
			}
			denial, _ := meta["red.prova/denial"].(string)
			cs.Close()
			h.exitCode()

			if got := receivedCalls(t, h.record); len(got) != len(tc.before) {
				t.Errorf("the server received %v; only the %d allowed calls should reach it", got, len(tc.before))
			}
			h.checkBook()
			entries := readBook(t, h.env.BookPath)
			refusals := entriesOf(entries, "refusal")
			if len(refusals) != 1 {
				t.Fatalf("%d refusals in the book", len(refusals))
			}
			r := refusals[0]
			if r.Fingerprint != denial {
				t.Errorf("_meta names denial %s, the book holds %s", denial, r.Fingerprint)
			}
			if r.Content["reason"] != tc.reason || r.Content["action"] != tc.action {
				t.Errorf("denial reason %v action %v", r.Content["reason"], r.Content["action"])
			}
			if by := r.Content["by"].(map[string]any); by["name"] != "test executor" {
				t.Errorf("denial by %v", by["name"])
			}
			if n := len(entriesOf(entries, "stub")); n != len(tc.before) {
				t.Errorf("%d stubs, want %d", n, len(tc.before))
			}
			lines := readCopy(t, h.env.CopyPath, h.env.CopyKey, "test executor")
			var den []copylog.Line
			for _, l := range lines {
				if l.Kind == copylog.KindDenial {
					den = append(den, l)
				}
				if l.Kind == copylog.KindSent && l.Tool == tc.call.Name && len(tc.before) == 0 {
					t.Errorf("the copy shows the refused call as sent")
				}
			}
			if len(den) != 1 || den[0].Refusal != denial || den[0].Reason != tc.reason {
				t.Errorf("copy denial lines %+v", den)
			}
		})
	}
}

// A tool name out of form is a JSON-RPC error (-32602): nothing is sent,
// nothing is written.
func TestToolNameOutOfForm(t *testing.T) {
	t.Parallel()
	h := startWith(t, "sdk", baseOptions())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := h.client(ctx)
	for _, name := range []string{"bad name", "", strings.Repeat("x", 129), "é"} {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
		if err == nil || !strings.Contains(err.Error(), "-32602") && !strings.Contains(err.Error(), "tool name") {
			t.Errorf("%q: error %v", name, err)
		}
	}
	cs.Close()
	h.exitCode()
	if got := receivedCalls(t, h.record); len(got) != 0 {
		t.Errorf("the server received %v", got)
	}
	entries := readBook(t, h.env.BookPath)
	if len(entries) != 1 {
		t.Errorf("the book holds %d entries; only the slip was expected", len(entries))
	}
}
