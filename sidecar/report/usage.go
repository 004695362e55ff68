package report

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"log/slog"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/keys"
	"github.com/seed-6e06167c/mcp-executor/receipts/receipt"
	"github.com/seed-6e06167c/mcp-executor/sidecar/boot"
	"github.com/seed-6e06167c/mcp-executor/sidecar/policy"
	"github.com/seed-6e06167c/mcp-executor/sidecar/policy/redact"
	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
)

// Refusal reasons `report` counts apart.
const (
	RefusedUnlisted    = "unlisted"
	RefusedRule        = "rule"
	RefusedSlip        = "slip"
	RefusedQuota       = "quota"
	RefusedContentRule = "content rule"
	RefusedDeclined    = "declined"
	RefusedTimedOut    = "timed out"
	RefusedApproval    = "approval" // another approval outcome (burned, no channel, used, crowded)
	RefusedOther       = "other"
)

// Percentiles are of durations in milliseconds.
type Percentiles struct {
	P50 int64 `json:"p50Ms"`
	P95 int64 `json:"p95Ms"`
	P99 int64 `json:"p99Ms"`
}

// ToolUsage is what happened to one tool's calls.
type ToolUsage struct {
	Tool    string `json:"tool"`
	Calls   int    `json:"calls"`   // sent and refused
	Allowed int    `json:"allowed"` // sent to the server
	// Approved counts the calls let through by a person's approval, by
	// channel (queue, elicitation, input, command, session, …).
	Approved map[string]int `json:"approved"`
	Refused  map[string]int `json:"refused"`
	Errors   int            `json:"errors"` // sent calls whose outcome is provared.error
	// Server is the call's time with the server, as the executor measured
	// it (the receipt line's serverMs); for a receipt line without it (an
	// older copy, a not-written line), the time from the call's sending
	// (the sent line's sentMs, or its when) to the receipt line, which holds
	// the stub's writing too. Never the time a call was held for a person.
	Server Percentiles `json:"serverTime"`
	// Held is the time calls waited for a person's approval.
	Held Percentiles `json:"heldTime"`

	serverMs, heldMs []int32
}

// UsageResult is `mcp-executor report`.
type UsageResult struct {
	Tools []*ToolUsage `json:"tools"`
	// SessionApprovals are the calls approved by --approve-session (no
	// person was asked), called out at the top of the report.
	SessionApprovals int `json:"sessionApprovals"`
	// DenialsFolded are refusals past the hourly number of denials (no
	// tool is named for them).
	DenialsFolded int64 `json:"denialsFolded"`
	// TimedToTheSecond counts the calls whose times were measured from
	// the stub's time, to the second: their sent lines, written before the
	// copy kept the time of sending (sentMs), have only that one.
	TimedToTheSecond int `json:"timedToTheSecond"`
	// Compare is the compare summary of copy and book.
	Compare   string `json:"compare"`
	CompareOK bool   `json:"compareOK"`
}

// Usage reads the copy (and, through compare, the book) that the settings
// name, loading the settings and the copy key once for both.
func Usage(ctx context.Context, configPath string, log *slog.Logger) (*UsageResult, error) {
	set, _, err := settings.Load(configPath)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(set.Executor.Copy); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no copy at %s yet: no executor has started with these settings, so there is nothing to report "+
			"(its first start, mcp-executor stdio or serve, makes it)", set.Executor.Copy)
	}
	kopts, closeClients, _ := boot.Clients(set, orDiscard(log))
	key, err := keys.LoadCopyKey(ctx, set.Executor.CopyKey, set.Dir, kopts)
	closeClients()
	if err != nil {
		return nil, fmt.Errorf("the copy key: %w", err)
	}
	res, err := usageOfCopy(set.Executor.Copy, key, set.Name)
	if err != nil {
		return nil, err
	}
	// The settings and the copy key are those just loaded: compare them
	// without loading both again (a key held by a secret store is a round
	// trip).
	cmp, err := compareWithKey(set, key, set.Agent.Book, false)
	if err != nil {
		res.Compare = "compare: FAIL " + err.Error()
	} else {
		res.Compare, res.CompareOK = cmp.Report.Summary(), cmp.OK()
	}
	return res, nil
}

// usageOfCopy counts the lines of the copy at path, read line by line.
func usageOfCopy(path string, key []byte, name string) (*UsageResult, error) {
	acc := newUsageAcc()
	if err := copylog.ReadFileFunc(path, key, name, func(ln copylog.Line) error {
		acc.add(ln)
		return nil
	}); err != nil {
		return nil, err
	}
	return acc.result(), nil
}

// UsageFromCopy counts the copy's lines, taken one at a time: per call it
// keeps only what it needs until the call's receipt, and per answered call
// its times (4 bytes each).
func UsageFromCopy(lines iter.Seq[copylog.Line]) *UsageResult {
	acc := newUsageAcc()
	for ln := range lines {
		acc.add(ln)
	}
	return acc.result()
}

// sentCall is what usageAcc keeps of a call from its sent line to its
// receipt.
type sentCall struct {
	tool string
	when time.Time
}

// usageAcc counts the copy's lines one at a time.
type usageAcc struct {
	byTool    map[string]*ToolUsage
	res       *UsageResult
	sent      map[string]sentCall
	requested map[string]time.Time // approval request id → requested at
	answers   map[string]string    // approval request id → channel of an approving answer
	useOf     map[string]string    // call → approval request id
}

func newUsageAcc() *usageAcc {
	return &usageAcc{byTool: map[string]*ToolUsage{}, res: &UsageResult{}, sent: map[string]sentCall{},
		requested: map[string]time.Time{}, answers: map[string]string{}, useOf: map[string]string{}}
}

func (a *usageAcc) tool(name string) *ToolUsage {
	u := a.byTool[name]
	if u == nil {
		u = &ToolUsage{Tool: name, Approved: map[string]int{}, Refused: map[string]int{}}
		a.byTool[name] = u
	}
	return u
}

// ms is d in whole milliseconds, kept in 32 bits (up to about 24 days).
func ms(d time.Duration) int32 {
	return int32(min(max(d.Milliseconds(), math.MinInt32), math.MaxInt32))
}

func (a *usageAcc) add(ln copylog.Line) {
	switch ln.Kind {
	case copylog.KindSent:
		u := a.tool(ln.Tool)
		u.Calls++
		u.Allowed++
		sentAt := ln.SentAt
		if sentAt.IsZero() {
			// An older copy: only the stub's time, rounded down to the second.
			sentAt = ln.When
			a.res.TimedToTheSecond++
		}
		a.sent[ln.Call] = sentCall{ln.Tool, sentAt}
		if req, ok := a.useOf[ln.Call]; ok {
			delete(a.useOf, ln.Call)
			ch := a.answers[req]
			u.Approved[ch]++
			if ch == "session" {
				a.res.SessionApprovals++
			}
			if at, ok := a.requested[req]; ok {
				u.heldMs = append(u.heldMs, ms(sentAt.Sub(at)))
			}
		}
	case copylog.KindReceipt, copylog.KindNotWritten:
		c, ok := a.sent[ln.Call]
		if !ok {
			return
		}
		delete(a.sent, ln.Call)
		u := a.tool(c.tool)
		if ln.Server != nil {
			// The executor's own measure: from writing the call to the
			// server to its answer, without the copy's and the book's writes.
			u.serverMs = append(u.serverMs, ms(*ln.Server))
		} else {
			u.serverMs = append(u.serverMs, ms(ln.When.Sub(c.when)))
		}
		if ln.Outcome != nil && ln.Outcome.Name == receipt.LabelError {
			u.Errors++
		}
	case copylog.KindLateReceipt:
		if c, ok := a.sent[ln.Call]; ok {
			delete(a.sent, ln.Call)
			a.tool(c.tool).Errors++
		}
	case copylog.KindDenial:
		u := a.tool(ln.Tool)
		u.Calls++
		u.Refused[refusedReason(ln)]++
	case copylog.KindDenialsFolded:
		a.res.DenialsFolded += ln.Count
	case copylog.KindApprovalRequest:
		a.requested[ln.Request] = ln.When
	case copylog.KindApprovalAnswer:
		if ln.Answer == copylog.AnswerApproved {
			a.answers[ln.Request] = ln.Channel
		}
	case copylog.KindApprovalUse:
		a.useOf[ln.Call] = ln.Request
	}
}

func (a *usageAcc) result() *UsageResult {
	res := a.res
	for _, u := range a.byTool {
		u.Server, u.Held = percentiles(u.serverMs), percentiles(u.heldMs)
		res.Tools = append(res.Tools, u)
	}
	sort.Slice(res.Tools, func(i, j int) bool { return res.Tools[i].Tool < res.Tools[j].Tool })
	if res.Tools == nil {
		res.Tools = []*ToolUsage{}
	}
	return res
}

// refusedReason sorts a denial line into the reasons the report counts.
func refusedReason(ln copylog.Line) string {
	for _, c := range ln.Codes {
		switch {
		case c == policy.CodeUnlisted:
			return RefusedUnlisted
		case c == policy.CodeRefusedByRule:
			return RefusedRule
		case c == policy.CodeQuota:
			return RefusedQuota
		case c == "approval-declined":
			return RefusedDeclined
		case c == "approval-expired":
			return RefusedTimedOut
		case strings.HasPrefix(c, "approval-"):
			return RefusedApproval
		}
	}
	switch {
	case ln.Rule != "":
		return RefusedContentRule
	case ln.Reason != "other" && ln.Reason != "":
		return RefusedSlip
	}
	return RefusedOther
}

// percentiles are nearest-rank percentiles of ms.
func percentiles(ms []int32) Percentiles {
	if len(ms) == 0 {
		return Percentiles{}
	}
	slices.Sort(ms)
	at := func(p int) int64 {
		k := (p*len(ms) + 99) / 100 // ceil(p/100 * n)
		return int64(ms[max(k, 1)-1])
	}
	return Percentiles{P50: at(50), P95: at(95), P99: at(99)}
}

// WriteText prints the report for people, tool names and the compare
// summary with their control characters escaped ([redact.Printable]): a
// client's tool name cannot act on the terminal.
func (r *UsageResult) WriteText(w io.Writer) error {
	var b strings.Builder
	if r.SessionApprovals > 0 {
		fmt.Fprintf(&b, "NOTE: %d call(s) were approved by --approve-session: no person was asked\n\n", r.SessionApprovals)
	}
	fmt.Fprintf(&b, "%-36s %6s %7s %-22s %-34s %6s %s\n", "tool", "calls", "allowed", "approved", "refused", "errors", "server p50/p95/p99 ms (held p50/p95/p99)")
	for _, u := range r.Tools {
		fmt.Fprintf(&b, "%-36s %6d %7d %-22s %-34s %6d %d/%d/%d (%d/%d/%d)\n", redact.Printable(u.Tool), u.Calls, u.Allowed, counts(u.Approved), counts(u.Refused),
			u.Errors, u.Server.P50, u.Server.P95, u.Server.P99, u.Held.P50, u.Held.P95, u.Held.P99)
	}
	if r.DenialsFolded > 0 {
		fmt.Fprintf(&b, "refusals past the hourly number of denials: %d\n", r.DenialsFolded)
	}
	if r.TimedToTheSecond > 0 {
		fmt.Fprintf(&b, "NOTE: the times of %d call(s) are to the second only, and up to a second too long: their sent lines come from a copy written before it kept the time of sending\n", r.TimedToTheSecond)
	}
	fmt.Fprintf(&b, "\n%s\n", redact.PrintableLines(r.Compare))
	_, err := io.WriteString(w, b.String())
	return err
}

func counts(m map[string]int) string {
	if len(m) == 0 {
		return "-"
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%s:%d", k, m[k])
	}
	return strings.Join(parts, ",")
}
