package sidecar

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/consent"
	"github.com/seed-6e06167c/mcp-executor/receipts/receipt"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
	"github.com/seed-6e06167c/mcp-executor/sidecar/approval"
	"github.com/seed-6e06167c/mcp-executor/sidecar/page"
	"github.com/seed-6e06167c/mcp-executor/sidecar/telemetry"
)

// Calls whose slip asks for the person's own approval, and the person's
// cancellation of the slip (issue 14; docs/design/page.md, "What the engine
// must call").
//
// A call the check before acting refuses only because the slip asks for an
// approval (consent.OnlyApprovalMissing) is held like a call of an approve
// rule: it counts against the slip's limits (book.Ledger.HoldForApproval)
// and is published with its prepared approval, which the page channel
// writes as <queue>/<id>.prepared. Only an answer carrying the passkey's
// signed approval lets it through: the check before acting runs again with
// the approval, and its stub and the approval are one book line. A plain
// yes (the queue file, the approve command, elicitation) proves nothing to
// the book: the call is refused with "needs-approval".
//
// A cancellation the person's signer drops beside the slip
// (page.CancellationPath) is honoured at once: no later call under the slip
// is sent, the calls held for approval are refused, and the cancellation
// goes into the book after the stubs of the calls already sent.

// passkeys is the executor's part for passkey approvals and cancellation.
type passkeys struct {
	slip  *slip.Slip
	wants bool // the slip's requires names an approval

	mu        sync.Mutex
	cancelled bool
	held      map[*toolCall]context.CancelFunc // calls held for a passkey approval
	hub       *approval.Hub                    // the approvals hub once open (withdrawHeld); nil before or without one

	stopWatch context.CancelFunc
	watchDone chan struct{}
}

// CodeAfterCancellation is the code of a call refused after the slip was
// cancelled.
const CodeAfterCancellation = "after-cancellation"

// openPasskeys reads a cancellation already beside the slip (putting it in
// the book when it is not there yet) and watches for one for the rest of
// the run. Called by Open before openApprovals.
func (e *Executor) openPasskeys(sl *slip.Slip) error {
	pk := &passkeys{slip: sl, held: map[*toolCall]context.CancelFunc{}}
	for _, c := range sl.Requires {
		if c.Need == "approval" {
			pk.wants = true
		}
	}
	e.pk = pk
	path := page.CancellationPath(e.set.Agent.Slip)
	c, err := page.ReadCancellation(path, sl)
	switch {
	case err == nil:
		if err := e.bookCancellation(c); err != nil {
			return err
		}
		pk.cancelled = true
		e.log.Warn("the slip is cancelled: every call under it is refused", slog.String("slip", e.slipFP), slog.String("cancellation", c.ID))
	case errors.Is(err, os.ErrNotExist):
	default:
		e.log.Warn("the cancellation file beside the slip does not check; the slip is not taken as cancelled", slog.String("file", path), slog.String("error", err.Error()))
	}
	if pk.cancelled {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	pk.stopWatch, pk.watchDone = cancel, make(chan struct{})
	go func() {
		defer close(pk.watchDone)
		page.WatchCancellation(ctx, path, sl, 0, e.log, e.honourCancellation)
	}()
	return nil
}

// closePasskeys stops watching for a cancellation.
func (e *Executor) closePasskeys() {
	if e.pk != nil && e.pk.stopWatch != nil {
		e.pk.stopWatch()
		<-e.pk.watchDone
	}
}

// pageChannels is the page's channel for the hub, beside the queue when the
// slip asks for approvals: it acts only on requests that carry a prepared
// approval (an open channel that would never answer a rule's approval
// otherwise hides "approval-no-channel").
func (e *Executor) pageChannels(queueDir string) []approval.Channel {
	if !e.wantsPasskey() {
		return nil
	}
	sl := e.pk.slip
	return []approval.Channel{page.NewChannel(queueDir, func() *slip.Slip { return sl }, 0, e.log)}
}

// wantsPasskey says whether the slip asks for approvals (the hub is then
// opened even when no tool rule holds calls).
func (e *Executor) wantsPasskey() bool { return e.pk != nil && e.pk.wants }

// isCancelled reports whether the slip was cancelled.
func (e *Executor) isCancelled() bool {
	if e.pk == nil {
		return false
	}
	e.pk.mu.Lock()
	defer e.pk.mu.Unlock()
	return e.pk.cancelled
}

// refuseCancelled refuses a call made after the slip was cancelled; it
// reports whether it did.
func (s *Session) refuseCancelled(tc *toolCall) bool {
	if !s.e.isCancelled() {
		return false
	}
	s.refuse(tc, refusal{action: tc.action, amount: tc.amount, reason: "not-in-slip", refused: CodeAfterCancellation,
		codes: []string{CodeAfterCancellation}, why: "the person cancelled the permission this call would act under"})
	return true
}

// bookCancellation appends the cancellation unless the book holds it.
func (e *Executor) bookCancellation(c *slip.Cancellation) error {
	errFound := errors.New("found")
	err := book.ReadFileEntries(e.book.Path(), func(fe book.FileEntry) error {
		if fe.Kind == book.KindCancellation && fe.Fingerprint == c.Record.Fingerprint {
			return errFound
		}
		return nil
	})
	if errors.Is(err, errFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the book for the slip's cancellation: %w", err)
	}
	if err := e.book.Append(book.Line{Cancellation: c.Record}); err != nil {
		return fmt.Errorf("adding the slip's cancellation to the book: %w", err)
	}
	return nil
}

// cancellationWait bounds how long a cancellation waits for the stubs of
// the calls already sent before it goes into the book.
func (e *Executor) cancellationWait() time.Duration { return e.set.Timeout + time.Minute }

// honourCancellation takes a cancellation that checks: no call under the
// slip is admitted from now on, the calls held for approval are refused,
// and the cancellation goes into the book once the stubs of the calls
// already sent are there.
func (e *Executor) honourCancellation(c *slip.Cancellation) {
	e.admitMu.Lock()
	e.pk.mu.Lock()
	e.pk.cancelled = true
	held := make([]context.CancelFunc, 0, len(e.pk.held))
	for _, cancel := range e.pk.held {
		held = append(held, cancel)
	}
	e.pk.mu.Unlock()
	e.admitMu.Unlock()
	e.log.Warn("the slip is cancelled: every later call under it is refused", slog.String("slip", e.slipFP), slog.String("cancellation", c.ID))
	for _, cancel := range held {
		cancel()
	}
	e.withdrawHeld()
	// Every stub placed after the cancellation would be after-cancellation:
	// wait for the calls reserved before it (none is reserved after).
	deadline := time.Now().Add(e.cancellationWait())
	for e.ledger.Flying(e.slipFP) > 0 {
		if time.Now().After(deadline) {
			e.log.Error("calls sent before the cancellation have no stub yet; the cancellation is written now", slog.String("slip", e.slipFP))
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := e.bookCancellation(c); err != nil {
		e.log.Error("the cancellation could not be written to the book", slog.String("error", err.Error()))
		e.stop("the book could not take the slip's cancellation: " + err.Error())
	}
}

// passkeyProposal is the held call as its stub will name it.
func (tc *toolCall) passkeyProposal() consent.Proposal {
	e := tc.s.e
	return consent.Proposal{Slip: e.slipFP, Request: slip.Request{Action: tc.action, Amount: tc.amount, With: e.set.Service, Details: tc.details}}
}

// holdForPasskey holds a call the check before acting refused only for the
// missing approval. Called with e.admitMu held; it unlocks it.
func (s *Session) holdForPasskey(tc *toolCall) {
	e := s.e
	lh, d := e.ledger.HoldForApproval(tc.proposal())
	e.admitMu.Unlock()
	if lh == nil {
		s.refuse(tc, refusal{action: tc.action, amount: tc.amount, reason: d.Reason(), codes: decisionCodes(d), why: slipWhy(d)})
		return
	}
	if e.appr == nil {
		lh.Release()
		s.refuse(tc, refusal{action: tc.action, amount: tc.amount, reason: "needs-approval", refused: approval.NoChannel.Code(),
			codes: []string{"approval-missing"}, why: "this call needs the person's passkey approval, and the executor has no way to ask for one"})
		return
	}
	prep, err := consent.PrepareApproval(tc.passkeyProposal(), time.Now())
	if err != nil {
		lh.Release()
		s.refuse(tc, refusal{action: tc.action, amount: tc.amount, reason: "other", refused: "approval-unprepared",
			codes: []string{"approval-unprepared"}, why: "the approval this call needs could not be prepared"})
		return
	}
	go s.awaitPasskey(s.holdUnder(tc, lh), tc, prep)
}

// awaitPasskey waits for the person's signed approval and sends the call,
// or refuses it.
func (s *Session) awaitPasskey(ctx context.Context, tc *toolCall, prep *slip.Prepared) {
	e := s.e
	defer func() {
		e.untrackHeld(tc)
		tc.held.cancel()
	}()
	c := approval.Call{CallID: tc.ourID, Tool: tc.tool, Action: tc.action, Amount: tc.amount, Slip: e.slipFP,
		Arguments: tc.call.Arguments, Timeout: e.set.ApprovalTimeout(tc.tool), Prepared: prep}
	res, ok := s.waitHub(ctx, tc, c)
	if !ok {
		return
	}
	switch {
	case res.Outcome == approval.Expired:
		tc.held.ledger.Release()
		s.refuse(tc, refusal{action: tc.action, amount: tc.amount, reason: "needs-approval", refused: "needs-approval",
			codes: []string{"approval-missing", res.Outcome.Code()}, why: "the person's passkey did not approve this call in time"})
		return
	case res.Outcome != approval.Approved:
		tc.held.ledger.Release()
		s.refuse(tc, refusal{action: tc.action, amount: tc.amount, reason: "other", refused: res.Outcome.Code(),
			codes: []string{res.Outcome.Code()}, why: "the call was not approved with the person's passkey (" + res.Outcome.Code() + ")"})
		return
	case res.Answer.Record == nil:
		tc.held.ledger.Release()
		s.refuse(tc, refusal{action: tc.action, amount: tc.amount, reason: "needs-approval", refused: "needs-approval",
			codes: []string{"approval-missing"}, why: "the permission asks for the person's passkey approval of this call; a yes without it proves nothing to the record"})
		return
	}
	// Approved: the wait was the call's approval.hold child span, left out
	// of the executor's own time (telemetry.go), as in hold.go.
	tc.tel.Approved(res.Request.ID)
	s.sendApproved(tc, res.Answer.Record)
}

// sendApproved checks the call again with its approval and sends it.
func (s *Session) sendApproved(tc *toolCall, rec *record.Record) {
	e := s.e
	if err := e.keepApproval(tc.ourID, rec); err != nil {
		tc.held.ledger.Release()
		e.log.Error("an approved call is not sent: its approval could not be kept for a restart", slog.String("call", tc.ourID), slog.String("error", err.Error()))
		tc.tel.Decide(telemetry.DecisionNotTaken)
		s.replyCallNotTaken(tc, notTakenApprovalNotKept)
		s.release(tc)
		return
	}
	tc.approval = rec
	if !s.lockAdmit(tc, func() {
		tc.held.ledger.Release()
		e.forgetApproval(tc)
	}) {
		return
	}
	tc.when = e.stubTime()
	p := tc.proposal()
	p.Approval = rec
	h, d := tc.held.ledger.Reserve(p)
	if !d.Allowed {
		e.admitMu.Unlock()
		tc.held.ledger.Release()
		e.forgetApproval(tc)
		s.refuse(tc, refusal{action: tc.action, amount: tc.amount, reason: d.Reason(), codes: decisionCodes(d), why: slipWhy(d)})
		return
	}
	tc.hold = h
	e.toScribe(tc)
	s.startSending(tc)
	e.admitMu.Unlock()
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

// keptSuffix names the file that keeps an approved call's approval in the
// queue folder from just before the call is sent until its stub is in the
// book: a start after a stop in between writes the stub late with it
// (recover), since the copy holds only the call's details.
const keptSuffix = ".approval"

func (e *Executor) keptPath(call string) string {
	return filepath.Join(e.set.Approvals.Queue, call+keptSuffix)
}

// keepApproval writes the approval of a call about to be sent, durably.
func (e *Executor) keepApproval(call string, rec *record.Record) error {
	data, err := canon.Marshal(map[string]any{"approval": rec.Value()})
	if err != nil {
		return fmt.Errorf("keeping the approval of call %s: %w", call, err)
	}
	// A new file renamed into place, the file and then the folder synced.
	if err := approval.WriteFileAtomic(e.set.Approvals.Queue, call+keptSuffix, data); err != nil {
		return fmt.Errorf("keeping the approval of call %s: %w", call, err)
	}
	return nil
}

// forgetApproval removes a kept approval once the call's stub is in the
// book or the call was not sent.
func (e *Executor) forgetApproval(tc *toolCall) {
	if tc.approval == nil {
		return
	}
	if err := os.Remove(e.keptPath(tc.ourID)); err != nil && !errors.Is(err, os.ErrNotExist) {
		e.log.Warn("a kept approval could not be removed", slog.String("call", tc.ourID), slog.String("error", err.Error()))
	}
}

// keptApproval reads the approval kept for a call; nil when there is none.
func (e *Executor) keptApproval(call string) (*record.Record, error) {
	data, err := approval.ReadQueueFile(e.keptPath(call))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the kept approval of call %s: %w", call, err)
	}
	v, err := canon.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("the kept approval of call %s (%s): %w", call, e.keptPath(call), err)
	}
	m, _ := v.(map[string]any)
	a, err := slip.ReadApproval(m["approval"])
	if err != nil {
		return nil, fmt.Errorf("the kept approval of call %s (%s): %w", call, e.keptPath(call), err)
	}
	return a.Record, nil
}

// recoverApproved writes the late stub of an approved call: exactly the
// details its approval names, with the approval on its line (the
// written-late and error documents stay in the copy). It reports whether
// the call had a kept approval.
func (e *Executor) recoverApproved(ctx context.Context, sent copylog.Line) (bool, error) {
	rec, err := e.keptApproval(sent.Call)
	if err != nil || rec == nil {
		return false, err
	}
	when := sent.When.UTC().Truncate(time.Second)
	p := book.Proposal{Slip: e.slipFP, Action: sent.Action, Amount: sent.Amount, With: e.set.Service, Details: sent.Details, When: when, Approval: rec}
	h, d := e.ledger.Reserve(p)
	if !d.Allowed {
		return true, fmt.Errorf("the receipt of approved call %s, sent %s, cannot be written: the check before acting refuses it (%v)",
			sent.Call, canon.FormatTime(when), decisionCodes(d))
	}
	pos, err := h.Position(ctx)
	var line book.SignedStub
	if err == nil {
		f := receipt.StubFields{Slip: e.slipFP, Seq: pos.Seq, Previous: pos.Previous, Action: sent.Action, Amount: sent.Amount,
			With: e.set.Service, Details: sent.Details, When: when, Approval: rec.Fingerprint}
		line, err = f.SignLine(ctx, e.agent, e.exec, time.Now().UTC())
	}
	if err == nil {
		line.Approval = rec
		err = e.book.AppendSigned(h, line)
	}
	if err != nil {
		h.Release()
		return true, fmt.Errorf("writing the receipt of approved call %s: %w", sent.Call, err)
	}
	if err := e.copy.Append(copylog.Line{Kind: copylog.KindLateReceipt, Call: sent.Call, Stub: line.Fingerprint()}); err != nil {
		return true, fmt.Errorf("writing the copy: %w", err)
	}
	if when.After(e.lastWhen) {
		e.lastWhen = when
	}
	if err := os.Remove(e.keptPath(sent.Call)); err != nil {
		e.log.Warn("a kept approval could not be removed", slog.String("call", sent.Call), slog.String("error", err.Error()))
	}
	e.log.Warn("wrote the receipt of an approved call the executor was sending when it stopped",
		slog.String("call", sent.Call), slog.String("stub", line.Fingerprint()))
	return true, nil
}

// trackHeld notes a call held for approval (a rule's or the passkey's), so
// that a cancellation of the slip ends its wait at once.
func (e *Executor) trackHeld(tc *toolCall, cancel context.CancelFunc) {
	if e.pk == nil {
		return
	}
	e.pk.mu.Lock()
	defer e.pk.mu.Unlock()
	if e.pk.cancelled {
		// Cancelled between the call's admission and now: honourCancellation
		// has already ended the waits it knew of.
		cancel()
		return
	}
	e.pk.held[tc] = cancel
}

// withdrawHeld takes down the requests of the slip's held calls (their
// queue and page files), once the slip is cancelled: the person is not left
// looking at calls that can no longer run. Called by honourCancellation,
// and by a held call refused after it (its request may have been made after
// honourCancellation's pass).
func (e *Executor) withdrawHeld() {
	if e.pk == nil {
		return
	}
	e.pk.mu.Lock()
	hub := e.pk.hub
	e.pk.mu.Unlock()
	if hub != nil {
		hub.EndSlip(e.slipFP)
	}
}

// passkeyHub hands the approvals hub to withdrawHeld, once it is open; when
// the slip is cancelled already (at the start, or by the watch meanwhile)
// the requests the copy kept for it are withdrawn at once.
func (e *Executor) passkeyHub(hub *approval.Hub) {
	if e.pk == nil {
		return
	}
	e.pk.mu.Lock()
	e.pk.hub = hub
	cancelled := e.pk.cancelled
	e.pk.mu.Unlock()
	if cancelled {
		hub.EndSlip(e.slipFP)
	}
}

// untrackHeld forgets a held call whose wait is over.
func (e *Executor) untrackHeld(tc *toolCall) {
	if e.pk == nil {
		return
	}
	e.pk.mu.Lock()
	delete(e.pk.held, tc)
	e.pk.mu.Unlock()
}
