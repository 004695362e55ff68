package settings

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestApprovalsDefaults(t *testing.T) {
	s, _, err := Parse("/etc/mcp/x.json", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	want := Approvals{Queue: "/etc/mcp/approvals", Timeout: 120 * time.Second, Elicit: true}
	if s.Approvals != want || s.Tools["order"].Approve != nil || s.ApprovalTimeout("order") != 120*time.Second {
		t.Fatalf("approvals %+v, approve %+v", s.Approvals, s.Tools["order"].Approve)
	}
}

// The queue's default folder is "approvals" beside the executor's copy, wherever the settings are: in
// a pod the settings are a read-only mount and the copy is on the executor's own volume. The same
// whether the settings have no approvals block or one without a queue; a queue given is kept.
func TestApprovalsDefaultQueue(t *testing.T) {
	for _, c := range []struct{ name, copy, block, want string }{
		{"copy beside the settings", "copy.jsonl", "", "/etc/mcp/approvals"},
		{"copy on its own volume", "/var/lib/mcp-executor/copy.jsonl", "", "/var/lib/mcp-executor/approvals"},
		{"copy in a sub-folder", "state/copy.jsonl", "", "/etc/mcp/state/approvals"},
		{"copy above the settings", "../state/c.jsonl", "", "/etc/state/approvals"},
		{"a block without a queue", "/var/lib/mcp-executor/copy.jsonl", `"approvals": {"timeout": 60000},`, "/var/lib/mcp-executor/approvals"},
		{"a block with a queue", "/var/lib/mcp-executor/copy.jsonl", `"approvals": {"queue": "/run/q"},`, "/run/q"},
		{"a queue relative to the settings", "/var/lib/mcp-executor/copy.jsonl", `"approvals": {"queue": "q"},`, "/etc/mcp/q"},
	} {
		t.Run(c.name, func(t *testing.T) {
			text := strings.Replace(base, `"copy": "copy.jsonl"`, `"copy": "`+c.copy+`"`, 1)
			text = strings.Replace(text, `"name": "t",`, `"name": "t", `+c.block, 1)
			s, _, err := Parse("/etc/mcp/x.json", []byte(text))
			if err != nil {
				t.Fatal(err)
			}
			if s.Approvals.Queue != c.want {
				t.Errorf("queue %s, want %s (copy %s)", s.Approvals.Queue, c.want, s.Executor.Copy)
			}
		})
	}
}

func TestApprovalsRead(t *testing.T) {
	text := edit(`"name": "t",`, `"name": "t", "approvals": {"queue": "../q", "timeout": 60000, "elicit": false, "pendingAfter": 5000},`)
	text = strings.Replace(text, `"action": "supplies.order",`, `"action": "supplies.order", "approve": {"timeout": 30000},`, 1)
	text = strings.Replace(text, `"tools": {`, `"tools": {"w": {"action": "files.write", "approve": true}, "r": {"action": "files.read", "approve": false}, `, 1)
	s, _, err := Parse("/etc/mcp/x.json", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	want := Approvals{Queue: "/etc/q", Timeout: 60 * time.Second, PendingAfter: 5 * time.Second}
	if s.Approvals != want {
		t.Fatalf("approvals %+v", s.Approvals)
	}
	if a := s.Tools["order"].Approve; a == nil || a.Timeout != 30*time.Second || s.ApprovalTimeout("order") != 30*time.Second {
		t.Fatalf("order approve %+v", a)
	}
	if a := s.Tools["w"].Approve; a == nil || a.Timeout != 0 || s.ApprovalTimeout("w") != 60*time.Second {
		t.Fatalf("w approve %+v", a)
	}
	if s.Tools["r"].Approve != nil {
		t.Fatalf("approve false held the tool")
	}
	abs := edit(`"name": "t",`, `"name": "t", "approvals": {"queue": "/var/lib/q/"},`)
	if s, _, err = Parse("/etc/mcp/x.json", []byte(abs)); err != nil || s.Approvals.Queue != "/var/lib/q" {
		t.Fatalf("absolute queue: %v %+v", err, s)
	}
}

func TestApprovalsFaults(t *testing.T) {
	block := func(b string) string { return edit(`"name": "t",`, `"name": "t", "approvals": `+b+`,`) }
	rule := func(a string) string {
		return edit(`"action": "supplies.order",`, `"action": "supplies.order", "approve": `+a+`,`)
	}
	cases := []struct{ name, text, place, reason string }{
		{"block type", block(`true`), "approvals", "must be an object"},
		{"unknown", block(`{"page": {}}`), "approvals.page", "not a known member"},
		{"queue empty", block(`{"queue": ""}`), "approvals.queue", "must not be empty"},
		{"queue type", block(`{"queue": 1}`), "approvals.queue", "must be text"},
		{"timeout low", block(`{"timeout": 999}`), "approvals.timeout", "from 1000 to 86400000"},
		{"timeout fraction", block(`{"timeout": 1000.5}`), "approvals.timeout", "whole number"},
		{"elicit type", block(`{"elicit": "yes"}`), "approvals.elicit", "true or false"},
		{"pendingAfter negative", block(`{"pendingAfter": -1}`), "approvals.pendingAfter", "from 0 to 86400000"},
		{"pendingAfter high", block(`{"pendingAfter": 86400001}`), "approvals.pendingAfter", "from 0 to 86400000"},
		{"approve text", rule(`"yes"`), "tools.order.approve", `must be true, false or {"timeout": ms}`},
		{"approve null", rule(`null`), "tools.order.approve", `must be true, false or {"timeout": ms}`},
		{"approve unknown", rule(`{"timeout": 2000, "channel": "queue"}`), "tools.order.approve.channel", "not a known member"},
		{"approve timeout low", rule(`{"timeout": 10}`), "tools.order.approve.timeout", "from 1000 to 86400000"},
		{"approve twice", rule(`true, "approve": false`), "tools.order.approve", "member given twice"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := Parse("/work/x.json", []byte(c.text))
			var se *Error
			if !errors.As(err, &se) || se.Place != c.place || !strings.Contains(se.Reason, c.reason) {
				t.Fatalf("got %v, want place %q and %q", err, c.place, c.reason)
			}
		})
	}
}
