package report

import (
	"slices"
	"strings"
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

// TestUsageTimesFromTheTimeOfSending: a sent line's when is the stub's
// time, rounded down to the second; the server's time and the time held
// are measured from its sentMs, to the millisecond. A copy written before
// sentMs was kept is still read: its times come from when, and the report
// says they are to the second.
func TestUsageTimesFromTheTimeOfSending(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	ok := &record.Detail{Name: receipt.LabelToolResult, SHA256: "x"}
	sent := func(call string, at int) copylog.Line {
		return copylog.Line{Kind: copylog.KindSent, Call: call, Tool: "t", When: ms(at).Truncate(time.Second), SentAt: ms(at)}
	}
	lines := []copylog.Line{
		sent("a", 314), {Kind: copylog.KindReceipt, Call: "a", Outcome: ok, When: ms(321)},
		sent("b", 1900), {Kind: copylog.KindReceipt, Call: "b", Outcome: ok, When: ms(1950)},
		sent("c", 2600), {Kind: copylog.KindReceipt, Call: "c", Outcome: ok, When: ms(3100)},
		// held from 3,000 ms; sent at 4,700 ms, its stub dated 4 s.
		{ApprovalFields: copylog.ApprovalFields{Request: "q"}, Kind: copylog.KindApprovalRequest, When: ms(3000)},
		{ApprovalFields: copylog.ApprovalFields{Request: "q", Answer: copylog.AnswerApproved, Channel: "queue"}, Kind: copylog.KindApprovalAnswer, When: ms(4690)},
		{ApprovalFields: copylog.ApprovalFields{Request: "q"}, Kind: copylog.KindApprovalUse, Call: "d", When: ms(4695)},
		sent("d", 4700), {Kind: copylog.KindReceipt, Call: "d", Outcome: ok, When: ms(4705)},
	}
	// The executor's own measure of the time with the server, on the
	// receipt line, is taken over the lines' times, which hold the copy's
	// and the book's writes too.
	three := 3 * time.Millisecond
	lines = append(lines, sent("e", 5000), copylog.Line{Kind: copylog.KindReceipt, Call: "e", Outcome: ok, When: ms(5009), Server: &three})
	res := UsageFromCopy(slices.Values(lines))
	if len(res.Tools) != 1 {
		t.Fatalf("tools %+v", res.Tools)
	}
	lines = lines[:len(lines)-2]
	if got := res.Tools[0].serverMs; !slices.Contains(got, 3) || slices.Contains(got, 9) {
		t.Errorf("server times %v: want the receipt's 3 ms, not the lines' 9", got)
	}
	res = UsageFromCopy(slices.Values(lines))
	if u := res.Tools[0]; u.Server != (Percentiles{7, 500, 500}) || u.Held != (Percentiles{1700, 1700, 1700}) || res.TimedToTheSecond != 0 {
		t.Errorf("server %+v, held %+v, timed to the second %d", u.Server, u.Held, res.TimedToTheSecond)
	}
	var b strings.Builder
	if err := res.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "to the second") {
		t.Errorf("the report says its times are to the second:\n%s", b.String())
	}

	// The same calls from an older copy: no sentMs.
	for i := range lines {
		lines[i].SentAt = time.Time{}
	}
	res = UsageFromCopy(slices.Values(lines))
	if u := res.Tools[0]; u.Server != (Percentiles{705, 1100, 1100}) || res.TimedToTheSecond != 4 {
		t.Errorf("an older copy: server %+v, timed to the second %d", u.Server, res.TimedToTheSecond)
	}
	b.Reset()
	if err := res.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "NOTE: the times of 4 call(s) are to the second only") {
		t.Errorf("the report does not say its times are to the second:\n%s", b.String())
	}
}
