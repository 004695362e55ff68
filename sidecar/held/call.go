package held

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/receipts/receipt"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/sidecar/approval"
)

// Call is one tool call held for a person's approval.
type Call struct {
	// Ledger is the call's place among the slip's limits while it waits;
	// it is reserved (Ledger.Reserve) when the call is approved, and let
	// go of otherwise.
	Ledger *book.Held
	// Ask is the call as the hub holds it: set before Wait.
	Ask approval.Call

	ctx    context.Context
	cancel context.CancelFunc
}

// New holds a call under the ledger's hold lh; its wait ends when parent
// does or Cancel is called.
func New(parent context.Context, lh *book.Held) *Call {
	ctx, cancel := context.WithCancel(parent)
	return &Call{Ledger: lh, ctx: ctx, cancel: cancel}
}

// Cancel ends the call's wait: the client withdrew it, or the slip was
// cancelled.
func (c *Call) Cancel() { c.cancel() }

// Passkey reports whether the call waits for the person's passkey-signed
// approval (the slip asks for one), not a rule's yes.
func (c *Call) Passkey() bool { return c.Ask.Prepared != nil }

// Wait holds the call at the hub until a person answers, its time runs
// out, or its wait ends.
func (c *Call) Wait(hub *approval.Hub) (approval.Result, error) { return hub.Hold(c.ctx, c.Ask) }

// Kind is what a held call's wait comes to.
type Kind int

// The verdicts.
const (
	Send    Kind = iota + 1 // approved: admit and send it
	Refuse                  // refused: a denial, and the server never sees it
	Pending                 // still waiting for a person: tell the client so
	Ended                   // the wait ended without an answer
)

// Verdict is what a held call's wait at the hub comes to.
type Verdict struct {
	Kind Kind
	// Request is the request for approval (Send, Pending).
	Request *approval.Request
	// Send: the answer that lets the call through. For a rule's approval,
	// Detail is the executor.approval detail its stub names; for the
	// person's own, Record is their signed approval, on the stub's line.
	Detail record.Detail
	Record *record.Record
	// Refuse: the denial's reason, the executor's code (red.prova/refused),
	// the codes and the text for the model.
	Reason, Refused string
	Codes           []string
	Why             string
	// Pending: answer with an input_required result (the client asked in
	// the call, 2026-07-28) rather than the pending tool result.
	Input bool
	// Ended: Closed is true when the wait ended because the call was
	// withdrawn or the session or the executor ended, false when the
	// copy could not take the request; Err says why.
	Closed bool
	Err    error
}

// ruleRefusals are the texts of a rule's approval that did not come.
var ruleRefusals = map[approval.Outcome]string{
	approval.Declined:  "a person declined this call",
	approval.Expired:   "no person approved this call in time",
	approval.Burned:    "the approval this call names was for other arguments: both are refused",
	approval.NoChannel: "this call needs a person's approval, and no one can be asked: the client cannot show a form and no other channel is open",
	approval.Used:      "the approval this call names was used already",
	approval.Crowded:   "too many calls wait for a person's approval",
}

// Verdict is what the hub's answer to Wait (res, err) comes to.
func (c *Call) Verdict(res approval.Result, err error) Verdict {
	if err != nil {
		return Verdict{Kind: Ended, Closed: errors.Is(err, context.Canceled) || errors.Is(err, approval.ErrClosed), Err: err}
	}
	if c.Passkey() {
		return passkeyVerdict(res)
	}
	switch {
	case res.Outcome == approval.Pending:
		return Verdict{Kind: Pending, Request: res.Request, Input: c.Ask.NoWait}
	case res.Outcome != approval.Approved:
		code := res.Outcome.Code()
		return Verdict{Kind: Refuse, Reason: "other", Refused: code, Codes: []string{code}, Why: ruleRefusals[res.Outcome]}
	}
	return Verdict{Kind: Send, Request: res.Request, Detail: record.Detail{Name: receipt.LabelApproval, SHA256: res.Approval}}
}

// passkeyVerdict is the verdict for a call that waits for the person's
// signed approval: only an answer that carries it lets the call through.
func passkeyVerdict(res approval.Result) Verdict {
	code := res.Outcome.Code()
	switch {
	case res.Outcome == approval.Expired:
		return Verdict{Kind: Refuse, Reason: "needs-approval", Refused: "needs-approval", Codes: []string{"approval-missing", code},
			Why: "the person's passkey did not approve this call in time"}
	case res.Outcome != approval.Approved:
		return Verdict{Kind: Refuse, Reason: "other", Refused: code, Codes: []string{code},
			Why: "the call was not approved with the person's passkey (" + code + ")"}
	case res.Answer.Record == nil:
		return Verdict{Kind: Refuse, Reason: "needs-approval", Refused: "needs-approval", Codes: []string{"approval-missing"},
			Why: "the permission asks for the person's passkey approval of this call; a yes without it proves nothing to the record"}
	}
	return Verdict{Kind: Send, Request: res.Request, Record: res.Answer.Record}
}

// PendingResult is the tool result of a Pending verdict: for a client that
// asked in the call (2026-07-28) an input_required result asking it;
// otherwise a result with isError saying the call waits for a person, the
// request's id in its _meta.
func (v Verdict) PendingResult() ([]byte, error) {
	if v.Input {
		return approval.InputRequiredResult(v.Request)
	}
	return json.Marshal(map[string]any{
		"content": []any{map[string]any{"type": "text", "text": approval.PendingText(v.Request)}},
		"isError": true, "_meta": approval.PendingMeta(v.Request)})
}
