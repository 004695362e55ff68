package sidecar

import (
	"log/slog"
	"time"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/receipts/consent"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
	"github.com/seed-6e06167c/mcp-executor/sidecar/approval"
	"github.com/seed-6e06167c/mcp-executor/sidecar/held"
	"github.com/seed-6e06167c/mcp-executor/sidecar/telemetry"
	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// Calls held for a person's approval (docs/design/approvals.md and
// page.md). A call is held in two ways, one held.Call each:
//
//   - its tool rule says "approve": judged and checked before acting as
//     every call is, it is held (book.Ledger.Hold) while the hub asks
//     every channel (the queue folder, the agent's client, Kubernetes);
//     approved, its stub names the answer (executor.approval);
//   - the check before acting refuses it only because the slip asks for
//     the person's approval (consent.OnlyApprovalMissing): it is held
//     (book.Ledger.HoldForApproval) with its prepared approval, which the
//     page publishes; only the person's passkey-signed approval lets it
//     through, on its stub's line. A plain yes proves nothing to the book:
//     the call is refused with "needs-approval".
//
// A held call keeps its maxWaiting slot and counts against the slip's
// limits without a place in the order of stubs. Approved, it is checked
// again and reserved (book.Held.Reserve) and sent as every call is
// (place); refused, it gets a denial and never reaches the server.

// openApprovals opens the hub and its channels (held.OpenApprovals) after
// the recovery of unfinished calls; approveSession approves every held
// call of this process.
func (e *Executor) openApprovals(sl *slip.Slip, approveSession bool) error {
	hub, err := held.OpenApprovals(held.Options{Settings: e.set, Copy: e.copy, Slip: sl,
		ApproveSession: approveSession, Redact: e.pol.Redact, Logger: e.log})
	if err != nil || hub == nil {
		return err
	}
	e.hub = hub
	e.holds.SetHub(hub) // a cancellation withdraws the slip's requests
	return nil
}

// closeApprovals ends the asking; calls still held get ErrClosed. Before
// the copy closes.
func (e *Executor) closeApprovals() {
	if e.hub != nil {
		e.hub.Close()
	}
}

// holdsFor says whether the call's tool rule holds it for approval.
func (s *Session) holdsFor(tc *toolCall) bool {
	t, ok := s.e.pol.Rule(tc.tool)
	return ok && t.Approve != nil
}

// holdCall holds a judged call for its rule's approval. It checks the call
// before acting (a refused call is never held), counts it as held, and
// waits for the hub in a goroutine of its own, so that the session's later
// calls are admitted meanwhile.
func (s *Session) holdCall(tc *toolCall) {
	e := s.e
	if e.hub == nil {
		s.refuse(tc, refusal{action: tc.action, amount: tc.amount, reason: "other", refused: approval.NoChannel.Code(),
			codes: []string{approval.NoChannel.Code()}, why: "this call needs a person's approval, and the executor has no way to ask one"})
		return
	}
	if !s.lockAdmit(tc, nil) {
		return
	}
	tc.when = e.stubTime()
	lh, d := e.ledger.Hold(tc.proposal())
	if consent.OnlyApprovalMissing(d) {
		s.holdForPasskey(tc) // unlocks admitMu
		return
	}
	e.admitMu.Unlock()
	if !d.Allowed {
		s.refuse(tc, refusal{action: tc.action, amount: tc.amount, reason: d.Reason(), codes: decisionCodes(d), why: slipWhy(d)})
		return
	}
	go s.await(tc, s.holdUnder(tc, lh), s.ruleAsk)
}

// holdForPasskey holds a call the check before acting refused only for the
// missing approval of the person. Called with e.admitMu held; it unlocks it.
func (s *Session) holdForPasskey(tc *toolCall) {
	e := s.e
	lh, d := e.ledger.HoldForApproval(tc.proposal())
	e.admitMu.Unlock()
	if lh == nil {
		s.refuse(tc, refusal{action: tc.action, amount: tc.amount, reason: d.Reason(), codes: decisionCodes(d), why: slipWhy(d)})
		return
	}
	if e.hub == nil {
		lh.Release()
		s.refuse(tc, refusal{action: tc.action, amount: tc.amount, reason: "needs-approval", refused: approval.NoChannel.Code(),
			codes: []string{"approval-missing"}, why: "this call needs the person's passkey approval, and the executor has no way to ask for one"})
		return
	}
	prep, err := consent.PrepareApproval(consent.Proposal{Slip: e.slipFP, Request: slip.Request{Action: tc.action, Amount: tc.amount,
		With: e.set.Service, Details: tc.details}}, time.Now())
	if err != nil {
		lh.Release()
		s.refuse(tc, refusal{action: tc.action, amount: tc.amount, reason: "other", refused: "approval-unprepared",
			codes: []string{"approval-unprepared"}, why: "the approval this call needs could not be prepared"})
		return
	}
	go s.await(tc, s.holdUnder(tc, lh), func(tc *toolCall) (approval.Call, bool) {
		c := s.asked(tc)
		c.Prepared = prep
		return c, true
	})
}

// holdUnder makes tc a call held under the ledger's hold lh: its wait
// ends when the client withdraws the call (at once when it did already),
// the session ends or the slip is cancelled.
func (s *Session) holdUnder(tc *toolCall, lh *book.Held) *held.Call {
	hc := held.New(s.ctx, lh)
	s.e.holds.Track(hc)
	s.mu.Lock()
	withdrawn := tc.state == stateWithdrawn
	tc.held = hc
	s.mu.Unlock()
	if withdrawn {
		hc.Cancel()
	}
	return hc
}

// proposal is the call as the check before acting sees it.
func (tc *toolCall) proposal() book.Proposal {
	e := tc.s.e
	return book.Proposal{Slip: e.slipFP, Action: tc.action, Amount: tc.amount, With: e.set.Service, Details: tc.details, When: tc.when}
}

// asked is the call as the hub shows it and holds it.
func (s *Session) asked(tc *toolCall) approval.Call {
	e := s.e
	return approval.Call{CallID: tc.ourID, Tool: tc.tool, Action: tc.action, Amount: tc.amount, Slip: e.slipFP,
		Arguments: tc.call.Arguments, Timeout: e.set.ApprovalTimeout(tc.tool)}
}

// await waits, in the held call's own goroutine, for the hub's answer
// (ask says what the hub is asked; false when the call was answered
// already) and sends, answers or refuses the call by the verdict.
func (s *Session) await(tc *toolCall, hc *held.Call, ask func(*toolCall) (approval.Call, bool)) {
	e := s.e
	defer hc.Cancel()
	defer e.holds.Untrack(hc)
	var ok bool
	if hc.Ask, ok = ask(tc); !ok {
		hc.Ledger.Release()
		return
	}
	// The wait is the call's approval.hold child span, and its time is left
	// out of the executor's own time.
	started := time.Now()
	endHold := tc.tel.HoldStarted()
	res, err := hc.Wait(e.hub)
	endHold(err)
	tc.tel.HeldFor(time.Since(started))
	if e.holds.Cancelled() {
		hc.Ledger.Release()
		e.holds.Withdraw()
		s.refuseCancelled(tc)
		return
	}
	switch v := hc.Verdict(res, err); v.Kind {
	case held.Ended:
		hc.Ledger.Release()
		s.heldEnded(tc, v)
	case held.Pending:
		hc.Ledger.Release()
		s.answerPending(tc, v)
	case held.Refuse:
		hc.Ledger.Release()
		s.refuse(tc, refusal{action: tc.action, amount: tc.amount, reason: v.Reason, refused: v.Refused, codes: v.Codes, why: v.Why})
	case held.Send:
		tc.tel.Approved(v.Request.ID)
		s.sendApproved(tc, hc, v)
	}
}

// sendApproved admits an approved call as every call is admitted (place):
// checked again, now with its approval, and reserved from its hold. A
// rule's approval goes into the stub's details; the person's signed
// approval is kept for a restart and goes on the stub's line.
func (s *Session) sendApproved(tc *toolCall, hc *held.Call, v held.Verdict) {
	e := s.e
	undo := hc.Ledger.Release
	if v.Record != nil {
		if err := e.kept.Keep(tc.ourID, v.Record); err != nil {
			hc.Ledger.Release()
			e.log.Error("an approved call is not sent: its approval could not be kept for a restart", slog.String("call", tc.ourID), slog.String("error", err.Error()))
			tc.tel.Decide(telemetry.DecisionNotTaken)
			s.replyCallNotTaken(tc, notTakenApprovalNotKept)
			s.release(tc)
			return
		}
		tc.approval = v.Record
		undo = func() {
			hc.Ledger.Release()
			e.forgetApproval(tc)
		}
	} else {
		tc.details = append(tc.details, v.Detail)
	}
	// the slip may have been cancelled while the call waited
	if !s.lockAdmit(tc, undo) {
		return
	}
	tc.when = e.stubTime()
	p := tc.proposal()
	p.Approval = tc.approval
	h, d := hc.Ledger.Reserve(p)
	s.place(tc, h, d, undo)
}

// ruleAsk is what the hub is asked for a call its rule holds: the request
// the call names, and how its client can be asked. For a 2026-07-28 retry
// that carries the answer in inputResponses, the answer is given to the
// hub and taken out of the call before it can reach the server. ok is
// false when the call was answered here.
func (s *Session) ruleAsk(tc *toolCall) (approval.Call, bool) {
	e := s.e
	c := s.asked(tc)
	c.Named = tc.call.Approval
	if wire.Modern(tc.call.ProtocolVersion) {
		if tc.call.ClientElicitation && e.set.Approvals.Elicit {
			c.NoWait = true
		}
		return c, s.takeInputAnswer(tc, &c)
	}
	if ch := s.client.Channel(tc.clientID); ch != nil && e.set.Approvals.Elicit {
		c.Channels = []approval.Channel{ch}
	}
	return c, true
}

// takeInputAnswer gives the hub the answer a 2026-07-28 retry carries and
// takes it (with the requestState) out of the call's line. It reports
// whether the call goes on to be held.
func (s *Session) takeInputAnswer(tc *toolCall, c *approval.Call) bool {
	id, yes, found, err := approval.InputAnswer(tc.msg.Params)
	if !found {
		return true
	}
	if err != nil {
		s.log.Info("a retried call's answer for approval is not read as yes", slog.String("call", tc.ourID), slog.String("error", err.Error()))
	}
	if id != "" {
		if err := s.e.hub.Answer(approval.Answer{Request: id, Approved: yes && err == nil, Channel: approval.ChannelInput, Who: approval.WhoClient}); err != nil {
			s.log.Info("a retried call's answer was not taken", slog.String("call", tc.ourID), slog.String("error", err.Error()))
		}
		c.Named = id
	}
	line, err := held.StripInput(tc.line, tc.msg, id)
	if err == nil {
		var m *wire.Message
		if m, err = wire.Inspect(line); err == nil {
			tc.line, tc.msg, tc.call = line, m, wire.ReadCall(line, m)
		}
	}
	if err != nil {
		s.log.Warn("the answer for approval could not be taken out of a retried call; it is refused", slog.String("call", tc.ourID), slog.String("error", err.Error()))
		s.replyCallError(tc, wire.CodeInvalidParams, "the call's inputResponses could not be read", nil)
		s.release(tc)
		return false
	}
	return true
}

// heldEnded ends a call whose wait ended without an answer: withdrawn by
// the client, the session or executor ending, or the copy refusing a line.
func (s *Session) heldEnded(tc *toolCall, v held.Verdict) {
	s.mu.Lock()
	withdrawn := tc.state == stateWithdrawn
	s.mu.Unlock()
	switch {
	case withdrawn:
		s.appendCopy(copylog.Line{Kind: copylog.KindWithdrawn, Call: tc.ourID})
		tc.tel.Withdrawn()
	case v.Closed:
		s.replyCallNotTaken(tc, notTakenDraining)
	default:
		s.e.stop("the copy could not be written: " + v.Err.Error())
		s.replyCallNotTaken(tc, notTakenRequestNotWritten)
	}
	s.release(tc)
}

// answerPending answers a call still waiting for a person: for a 2026-07-28
// client an input_required result asking it; otherwise a tool result
// (isError) saying so, with the request's id in _meta. No stub, no denial.
func (s *Session) answerPending(tc *toolCall, v held.Verdict) {
	result, err := v.PendingResult()
	if err == nil && !v.Input {
		result = tc.eraResult(result) // input_required names its resultType itself
	}
	if err != nil {
		s.replyCallError(tc, wire.CodeInternalError, "the answer for a call waiting for approval could not be written", nil)
		s.release(tc)
		return
	}
	line := []byte(`{"jsonrpc":"2.0","id":`)
	line = append(line, tc.clientID...)
	line = append(line, `,"result":`...)
	line = append(line, result...)
	line = append(line, '}')
	s.logCall(tc, "the call waits for a person's approval", slog.String("request", v.Request.ID))
	s.answerCall(tc, line)
	s.release(tc)
}

// stubDetails are what an approved call's stub names: the details the approval
// names and no outcome (that stays in the copy's receipt line), and the
// approval on its line. Other stubs gain the outcome document.
func (tc *toolCall) stubDetails(doc record.Detail) ([]record.Detail, string) {
	if tc.approval != nil {
		return append([]record.Detail(nil), tc.details...), tc.approval.Fingerprint
	}
	return append(append([]record.Detail(nil), tc.details...), doc), ""
}

// forgetApproval removes a kept approval once the call's stub is in the
// book or the call was not sent.
func (e *Executor) forgetApproval(tc *toolCall) {
	if tc.approval == nil {
		return
	}
	if err := e.kept.Forget(tc.ourID); err != nil {
		e.log.Warn("a kept approval could not be removed", slog.String("call", tc.ourID), slog.String("error", err.Error()))
	}
}
