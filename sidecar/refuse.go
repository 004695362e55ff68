package sidecar

import (
	"log/slog"
	"strings"
	"time"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/receipt"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/sidecar/policy"
	"github.com/seed-6e06167c/mcp-executor/sidecar/telemetry"
	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// refusal is why the executor does not send a call.
type refusal struct {
	action  string
	amount  *record.Amount
	reason  string   // the denial's reason: not-in-slip, over-limit, …, other
	refused string   // red.prova/refused: the reason, or the executor's own code
	codes   []string // red.prova/codes
	rule    string   // the content rule's name, "" for none
	why     string   // prose for the model; never an argument value
}

// refuse answers a call the executor does not send: a tool error for the
// model, a signed denial in the book (at most denialsPerHour an hour) and a
// denial line in the copy. The server never sees the call.
func (s *Session) refuse(tc *toolCall, r refusal) {
	e := s.e
	defer s.release(tc)
	tc.tel.Decide(telemetry.DecisionRefused)
	if r.refused == "" {
		r.refused = r.reason
	}
	now := time.Now().UTC()
	denialFP := ""
	capped := false
	unwritten := "" // why no denial is in the book
	if e.denials.Allow(now) {
		f := receipt.DenialFields{Slip: e.slipFP, Action: r.action, Amount: r.amount, Reason: r.reason, By: e.set.Name, When: now}
		line, err := f.Sign(tc.ctx, e.exec)
		if err == nil {
			err = tc.tel.Durable(telemetry.FileBook, func() error { return e.book.Append(line) })
		}
		if err == nil {
			e.bookAppended(tc.ctx, "denial", line)
		}
		if err != nil {
			tc.log().Error("a denial could not be written to the book", slog.String("error", err.Error()))
			unwritten = "the book could not take the denial: " + err.Error()
		} else {
			denialFP = line.Refusal.Fingerprint
		}
	} else {
		capped = true
		unwritten = copylog.UnwrittenCap
	}
	ruleFP := ""
	if r.rule != "" {
		ruleFP = canon.Fingerprint([]byte(r.rule))
	}
	if capped {
		// Past the hourly cap: counted, and one copy line per interval holds the count.
		e.denials.Fold()
	} else {
		s.appendCopy(copylog.Line{Kind: copylog.KindDenial, When: now, Call: tc.ourID, Tool: tc.tool, Action: r.action,
			Reason: r.reason, Codes: r.codes, Slip: e.slipFP, Refusal: denialFP, Rules: e.rulesFP, Rule: ruleFP, Unwritten: unwritten})
	}

	meta := map[string]any{wire.MetaRefused: r.refused, wire.MetaCodes: nonNil(r.codes)}
	if denialFP != "" {
		meta[wire.MetaDenial] = denialFP
	}
	if r.rule != "" {
		meta[wire.MetaRule] = r.rule
	}
	why := r.why
	switch {
	case capped:
		why += " (no denial was written: the hourly number of denials is reached)"
	case unwritten != "":
		why += " (no denial was written: the book could not be written)"
	}
	result, err := wire.ToolErrorResult(why, meta)
	if err != nil {
		s.replyCallNotTaken(tc, notTakenRefusalNotWritten)
		return
	}
	result = tc.eraResult(result)
	tc.tel.Refused(r.refused, denialFP)
	s.logCall(tc, "call refused", slog.String("refused", r.refused), slog.String("codes", strings.Join(r.codes, ",")),
		slog.Bool("denialWritten", denialFP != ""))
	s.answerCall(tc, wire.ResultLine(tc.clientID, result))
}

func nonNil(c []string) []string {
	if c == nil {
		return []string{}
	}
	return c
}

// decisionCodes lists a decision's problem and breach codes.
func decisionCodes(d book.Decision) []string {
	out := make([]string, 0, len(d.Problems)+len(d.Breaches))
	for _, f := range d.Problems {
		out = append(out, f.Code)
	}
	for _, f := range d.Breaches {
		out = append(out, f.Code)
	}
	return out
}

// slipWhy says, for the model, why the check before acting refused a call.
func slipWhy(d book.Decision) string {
	var why string
	switch d.Reason() {
	case "slip-not-sound":
		why = "the permission or the record cannot be relied on"
	case "outside-valid-time":
		why = "the permission is not valid at this time"
	case "not-in-slip":
		why = "the permission does not allow this action"
	case "over-limit":
		why = "the permission's limit for this action would be passed"
	case "needs-approval":
		why = "the permission asks for the person's approval of this action"
	default:
		why = "the permission does not allow this call"
	}
	if c := decisionCodes(d); len(c) > 0 {
		why += " (" + strings.Join(c, ", ") + ")"
	}
	return why
}

// reserveQuota counts the call against its rule's quota; a full quota
// refuses it (with a denial) and reports false.
func (s *Session) reserveQuota(tc *toolCall, rule policy.Rule) bool {
	if rule.Quota == nil {
		return true
	}
	res, err := s.e.pol.ReserveQuota(tc.tool, *rule.Quota)
	if err != nil {
		s.refuse(tc, refusal{action: rule.Action, reason: "other", refused: policy.CodeQuota, codes: []string{policy.CodeQuota}, why: err.Error()})
		return false
	}
	tc.quota = res
	return true
}

// refuseByRule refuses a call whose rule says "refuse": true.
func (s *Session) refuseByRule(tc *toolCall, rule policy.Rule) {
	action := rule.Action
	if action == "" {
		action = policy.ActionRefused
	}
	s.refuse(tc, refusal{action: action, reason: "other", refused: policy.CodeRefusedByRule, codes: []string{policy.CodeRefusedByRule},
		why: "the executor's settings refuse the tool " + quote(tc.tool) + " (rule " + rule.Decision.Label() + ")"})
}

// serverOf names the server a tool name routes to, "" with the single
// "server" form.
func (e *Executor) serverOf(tool string) string {
	server, _, _ := e.set.Route(tool)
	return server
}

// eraResult is a result the executor wrote itself for tc, in the form of the client's era: a
// 2026-07-28 request (its params._meta names the revision) gets resultType "complete" on it; a
// request of an earlier revision gets it as it is. The server's own results are never changed.
func (tc *toolCall) eraResult(result []byte) []byte {
	if wire.Modern(tc.call.ProtocolVersion) {
		return wire.Complete(result)
	}
	return result
}
