package report

import (
	"context"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/keys"
	"github.com/seed-6e06167c/mcp-executor/receipts/receipt"
	"github.com/seed-6e06167c/mcp-executor/sidecar/boot"
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
	// Server is the time from the copy's sent line to its receipt line:
	// the server's time (and the stub's writing), never the time a call
	// was held for a person.
	Server Percentiles `json:"serverTime"`
	// Held is the time calls waited for a person's approval.
	Held Percentiles `json:"heldTime"`

	serverMs, heldMs []int64
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
	// Compare is the compare summary of copy and book.
	Compare   string `json:"compare"`
	CompareOK bool   `json:"compareOK"`
}

// Usage reads the copy (and, through compare, the book) that the settings
// name.
func Usage(ctx context.Context, configPath string, log *slog.Logger) (*UsageResult, error) {
	set, _, err := settings.Load(configPath)
	if err != nil {
		return nil, err
	}
	kopts, closeClients, _ := boot.Clients(set, orDiscard(log))
	key, err := keys.LoadCopyKey(ctx, set.Executor.CopyKey, set.Dir, kopts)
	closeClients()
	if err != nil {
		return nil, fmt.Errorf("the copy key: %w", err)
	}
	lines, err := copylog.ReadFile(set.Executor.Copy, key, set.Name)
	if err != nil {
		return nil, err
	}
	res := UsageFromCopy(slices.Values(lines))
	cmp, err := CompareCopy(ctx, CompareOptions{ConfigPath: configPath, Logger: log})
	if err != nil {
		res.Compare = "compare: FAIL " + err.Error()
	} else {
		res.Compare, res.CompareOK = cmp.Report.Summary(), cmp.OK()
	}
	return res, nil
}

// UsageFromCopy counts the copy's lines, taken one at a time: per call it
// keeps only what it needs until the call's receipt.
func UsageFromCopy(lines iter.Seq[copylog.Line]) *UsageResult {
	type sentCall struct {
		tool string
		when time.Time
	}
	byTool := map[string]*ToolUsage{}
	tool := func(name string) *ToolUsage {
		u := byTool[name]
		if u == nil {
			u = &ToolUsage{Tool: name, Approved: map[string]int{}, Refused: map[string]int{}}
			byTool[name] = u
		}
		return u
	}
	res := &UsageResult{}
	sent := map[string]sentCall{}
	requested := map[string]time.Time{} // approval request id → requested at
	answers := map[string]string{}      // approval request id → channel of an approving answer
	useOf := map[string]string{}        // call → approval request id
	for ln := range lines {
		switch ln.Kind {
		case copylog.KindSent:
			u := tool(ln.Tool)
			u.Calls++
			u.Allowed++
			sent[ln.Call] = sentCall{ln.Tool, ln.When}
			if req, ok := useOf[ln.Call]; ok {
				delete(useOf, ln.Call)
				ch := answers[req]
				u.Approved[ch]++
				if ch == "session" {
					res.SessionApprovals++
				}
				if at, ok := requested[req]; ok {
					u.heldMs = append(u.heldMs, ln.When.Sub(at).Milliseconds())
				}
			}
		case copylog.KindReceipt, copylog.KindNotWritten:
			c, ok := sent[ln.Call]
			if !ok {
				continue
			}
			delete(sent, ln.Call)
			u := tool(c.tool)
			u.serverMs = append(u.serverMs, ln.When.Sub(c.when).Milliseconds())
			if ln.Outcome != nil && ln.Outcome.Name == receipt.LabelError {
				u.Errors++
			}
		case copylog.KindLateReceipt:
			if c, ok := sent[ln.Call]; ok {
				delete(sent, ln.Call)
				tool(c.tool).Errors++
			}
		case copylog.KindDenial:
			u := tool(ln.Tool)
			u.Calls++
			u.Refused[refusedReason(ln)]++
		case copylog.KindDenialsFolded:
			res.DenialsFolded += ln.Count
		case copylog.KindApprovalRequest:
			requested[ln.Request] = ln.When
		case copylog.KindApprovalAnswer:
			if ln.Answer == copylog.AnswerApproved {
				answers[ln.Request] = ln.Channel
			}
		case copylog.KindApprovalUse:
			useOf[ln.Call] = ln.Request
		}
	}
	for _, u := range byTool {
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
		case c == "unlisted":
			return RefusedUnlisted
		case c == "refused-by-rule":
			return RefusedRule
		case c == "quota":
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
func percentiles(ms []int64) Percentiles {
	if len(ms) == 0 {
		return Percentiles{}
	}
	slices.Sort(ms)
	at := func(p int) int64 {
		k := (p*len(ms) + 99) / 100 // ceil(p/100 * n)
		return ms[max(k, 1)-1]
	}
	return Percentiles{P50: at(50), P95: at(95), P99: at(99)}
}

// WriteText prints the report for people.
func (r *UsageResult) WriteText(w io.Writer) error {
	var b strings.Builder
	if r.SessionApprovals > 0 {
		fmt.Fprintf(&b, "NOTE: %d call(s) were approved by --approve-session: no person was asked\n\n", r.SessionApprovals)
	}
	fmt.Fprintf(&b, "%-36s %6s %7s %-22s %-34s %6s %s\n", "tool", "calls", "allowed", "approved", "refused", "errors", "server p50/p95/p99 ms (held p50/p95/p99)")
	for _, u := range r.Tools {
		fmt.Fprintf(&b, "%-36s %6d %7d %-22s %-34s %6d %d/%d/%d (%d/%d/%d)\n", u.Tool, u.Calls, u.Allowed, counts(u.Approved), counts(u.Refused),
			u.Errors, u.Server.P50, u.Server.P95, u.Server.P99, u.Held.P50, u.Held.P95, u.Held.P99)
	}
	if r.DenialsFolded > 0 {
		fmt.Fprintf(&b, "refusals past the hourly number of denials: %d\n", r.DenialsFolded)
	}
	fmt.Fprintf(&b, "\n%s\n", r.Compare)
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
