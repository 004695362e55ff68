package report

import (
	"slices"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/receipts/receipt"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// The report counts calls, allowed, approved by channel, refused by
// reason and errors per tool, with the server's time apart from the time
// held for a person, and calls out --approve-session.
func TestUsageFromCopy(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	ok := &record.Detail{Name: receipt.LabelToolResult, SHA256: "x"}
	bad := &record.Detail{Name: receipt.LabelError, SHA256: "y"}
	var lines []copylog.Line
	// fs.read: 100 calls of 1..100 ms, the last two errors.
	for i := 1; i <= 100; i++ {
		call := "r" + string(rune('A'+i%26)) + string(rune('A'+i/26))
		out := ok
		if i > 98 {
			out = bad
		}
		lines = append(lines,
			copylog.Line{Kind: copylog.KindSent, Call: call, Tool: "fs.read", When: ms(1000 * i)},
			copylog.Line{Kind: copylog.KindReceipt, Call: call, Outcome: out, When: ms(1000*i + i)})
	}
	lines = append(lines,
		// a call held 5 s, approved in the queue; one approved by --approve-session.
		copylog.Line{ApprovalFields: copylog.ApprovalFields{Request: "q1"}, Kind: copylog.KindApprovalRequest, When: ms(0)},
		copylog.Line{ApprovalFields: copylog.ApprovalFields{Request: "q1", Answer: copylog.AnswerApproved, Channel: "queue"}, Kind: copylog.KindApprovalAnswer, When: ms(4000)},
		copylog.Line{ApprovalFields: copylog.ApprovalFields{Request: "q1"}, Kind: copylog.KindApprovalUse, Call: "w1", When: ms(5000)},
		copylog.Line{Kind: copylog.KindSent, Call: "w1", Tool: "fs.write", When: ms(5000)},
		copylog.Line{Kind: copylog.KindReceipt, Call: "w1", Outcome: ok, When: ms(5040)},
		copylog.Line{ApprovalFields: copylog.ApprovalFields{Request: "q2"}, Kind: copylog.KindApprovalRequest, When: ms(6000)},
		copylog.Line{ApprovalFields: copylog.ApprovalFields{Request: "q2", Answer: copylog.AnswerApproved, Channel: "session"}, Kind: copylog.KindApprovalAnswer, When: ms(6000)},
		copylog.Line{ApprovalFields: copylog.ApprovalFields{Request: "q2"}, Kind: copylog.KindApprovalUse, Call: "w2", When: ms(6000)},
		copylog.Line{Kind: copylog.KindSent, Call: "w2", Tool: "fs.write", When: ms(6000)},
		copylog.Line{Kind: copylog.KindReceipt, Call: "w2", Outcome: ok, When: ms(6020)},
	)
	for _, d := range []struct {
		reason, rule string
		codes        []string
	}{
		{"other", "", []string{"unlisted"}}, {"other", "", []string{"refused-by-rule"}}, {"other", "", []string{"quota"}},
		{"other", "", []string{"quota"}}, {"not-in-slip", "", []string{"action-not-allowed"}}, {"other", "fp", []string{"no-secrets"}},
		{"other", "", []string{"approval-declined"}}, {"other", "", []string{"approval-expired"}},
	} {
		lines = append(lines, copylog.Line{Kind: copylog.KindDenial, Tool: "fs.write", Reason: d.reason, Rule: d.rule, Codes: d.codes})
	}
	lines = append(lines, copylog.Line{Kind: copylog.KindDenialsFolded, Count: 7})
	res := UsageFromCopy(slices.Values(lines))
	if len(res.Tools) != 2 || res.Tools[0].Tool != "fs.read" {
		t.Fatalf("tools %+v", res.Tools)
	}
	r := res.Tools[0]
	if r.Calls != 100 || r.Allowed != 100 || r.Errors != 2 || r.Server != (Percentiles{50, 95, 99}) {
		t.Errorf("fs.read: %+v", r)
	}
	w := res.Tools[1]
	if w.Calls != 10 || w.Allowed != 2 || w.Approved["queue"] != 1 || w.Approved["session"] != 1 {
		t.Errorf("fs.write: %+v", w)
	}
	want := map[string]int{RefusedUnlisted: 1, RefusedRule: 1, RefusedQuota: 2, RefusedSlip: 1, RefusedContentRule: 1, RefusedDeclined: 1, RefusedTimedOut: 1}
	for k, v := range want {
		if w.Refused[k] != v {
			t.Errorf("fs.write refused %s: %d, want %d (%v)", k, w.Refused[k], v, w.Refused)
		}
	}
	if w.Server.P99 != 40 || w.Held.P50 != 0 || w.Held.P99 != 5000 {
		t.Errorf("fs.write times: server %+v held %+v", w.Server, w.Held)
	}
	if res.SessionApprovals != 1 || res.DenialsFolded != 7 {
		t.Errorf("session approvals %d, folded %d", res.SessionApprovals, res.DenialsFolded)
	}
}
