package sidecar

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/internal/faultinject"
	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/consent"
	"github.com/seed-6e06167c/mcp-executor/receipts/receipt"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/sidecar/held"
	"github.com/seed-6e06167c/mcp-executor/sidecar/policy"
	"github.com/seed-6e06167c/mcp-executor/sidecar/policy/quota"
	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
	"github.com/seed-6e06167c/mcp-executor/sidecar/telemetry"
	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// outcomeKind is how a sent call ended.
type outcomeKind int

const (
	outResult       outcomeKind = iota + 1 // the server's result
	outError                               // the server's JSON-RPC error
	outTimeout                             // no answer within the timeout
	outCancelled                           // the client cancelled it
	outServerExit                          // the server ended
	outUnreadable                          // an answer that is not an acceptable message, matched by its id
	outNotSent                             // the copy could not be written: not sent, no record
	outWithdrawn                           // cancelled before its copy line: not sent, no record
	outNotDelivered                        // its copy line was written, but its bytes could not be written to the server
)

// outcome is how a sent call ended; line holds the server's answer, msg
// the answer read (nil for outUnreadable), idSpan where its id is, and
// text the fixed document an unreadable answer is bound by.
type outcome struct {
	kind   outcomeKind
	line   []byte
	msg    *wire.Message
	idSpan wire.Span
	text   string
}

// noAnswerText is the message of the 1002 error the client gets, which the
// stub's provared.error document is.
func (o outcome) noAnswerText() string {
	switch o.kind {
	case outTimeout:
		return "no answer: the time for the tool server to answer ran out"
	case outCancelled:
		return "no answer: the call was cancelled"
	case outNotDelivered:
		return "no answer: the call could not be written to the tool server, which did not get it"
	case outUnreadable:
		return o.text
	default:
		return "no answer: the tool server ended"
	}
}

// serverError is how the outcome ends the call's server span: no error
// type for a result; otherwise error.type and the status.
func (o outcome) serverError() (errorType, why string) {
	switch o.kind {
	case outResult:
		return "", ""
	case outError:
		return "jsonrpc-error", "the tool server answered with an error"
	}
	return outcomeErrorType(o.kind), o.noAnswerText()
}

// outcomeErrorType is error.type for an outcome with no result.
func outcomeErrorType(k outcomeKind) string {
	switch k {
	case outTimeout:
		return "timeout"
	case outCancelled:
		return "cancelled"
	case outServerExit:
		return "server-exit"
	case outUnreadable:
		return "unreadable-answer"
	case outNotDelivered:
		return "not-delivered"
	case outNotSent:
		return "not-recorded"
	case outWithdrawn:
		return "withdrawn"
	}
	return "other"
}

// document returns the stub's outcome record.Detail.
func (o outcome) document() record.Detail {
	switch o.kind {
	case outResult:
		fp, err := canon.JCSFingerprint(o.msg.Result)
		if err != nil {
			return record.TextDetail(receipt.LabelError, receipt.TextResultNotCanonical)
		}
		return record.Detail{Name: receipt.LabelToolResult, SHA256: fp}
	case outError:
		fp, err := canon.JCSFingerprint(o.msg.Error)
		if err != nil {
			return record.TextDetail(receipt.LabelError, receipt.TextResultNotCanonical)
		}
		return record.Detail{Name: receipt.LabelError, SHA256: fp}
	case outUnreadable:
		return record.TextDetail(receipt.LabelError, o.text)
	}
	return record.TextDetail(receipt.LabelError, o.noAnswerText())
}

// call states.
const (
	stateWaiting   = iota // taken, waiting its turn
	stateWithdrawn        // cancelled while waiting: nothing is sent or written
	stateSent             // sent to the server, waiting for its outcome
)

// toolCall is one tools/call from the client.
type toolCall struct {
	s        *Session
	line     []byte
	msg      *wire.Message
	call     wire.Call // its params, read once, for the judge, the telemetry, a hold and the server
	clientID []byte
	ourID    string

	size     int64 // the call's line's bytes, counted against maxBytesWaiting
	state    int   // guarded by s.mu
	slotFree bool  // guarded by s.mu: freeSlot has run

	// Set by admit before the call is sent.
	tool    string
	action  string
	amount  *record.Amount
	details []record.Detail
	when    time.Time
	hold    *book.Reservation
	quota   *quota.Reservation // nil when the tool's rule sets no quota
	held    *held.Call         // set for a call held for approval (hold.go)
	// approval is the person's signed approval the call was sent with
	// (the slip asks for it); nil for none.
	approval *record.Record

	ctx context.Context // its span's: its records are written under it
	tel *telemetry.Call

	// The session's calls reach the server in the order of their places
	// in the book: a call is sent once the call before it is sent (or
	// ended unsent). Set by admit.
	prevSent <-chan struct{} // nil for the session's first call
	sentDone chan struct{}   // closed when send is through with this call

	// Its place in the scribe's order (scribe.go), and the place of the
	// call before it (nil for the first). Set by toScribe.
	prep, prevPrep *prepSlot

	once  sync.Once
	done  chan struct{}
	out   outcome
	timer *time.Timer
}

// finish records the call's outcome; the first one wins. It reports whether
// this was the first.
func (tc *toolCall) finish(o outcome) bool {
	first := false
	tc.once.Do(func() {
		first = true
		tc.out = o
		tc.tel.ServerEnded(o.serverError())
		s := tc.s
		s.mu.Lock()
		if tc.timer != nil {
			tc.timer.Stop()
		}
		delete(s.calls, tc.ourID)
		s.ended[tc.ourID] = struct{}{}
		s.endedOrder = append(s.endedOrder, tc.ourID)
		if len(s.endedOrder) > maxEndedCalls {
			delete(s.ended, s.endedOrder[0])
			s.endedOrder = s.endedOrder[1:]
		}
		s.mu.Unlock()
		close(tc.done)
	})
	return first
}

// cancel handles the client's notifications/cancelled for this call.
func (tc *toolCall) cancel() {
	s := tc.s
	s.mu.Lock()
	st := tc.state
	if st == stateWaiting {
		tc.state = stateWithdrawn
		if tc.held != nil {
			tc.held.Cancel() // ends its wait for approval
		}
	}
	s.mu.Unlock()
	// A call whose copy line is being written counts as sent: its stub will
	// say it was cancelled.
	if st == stateSent && tc.finish(outcome{kind: outCancelled}) {
		s.sendCancelled(tc.ourID, "cancelled by the client")
	}
}

// notTaken answers a tools/call 1001 before it is taken, with nt's
// message as the answer's message and its span's status.
func (s *Session) notTaken(m *wire.Message, call *wire.Call, nt notTaken) {
	s.e.tel.NotTakenCall(s.spanBase(), m, call, s.telID.String(), nt.message)
	s.replyNotTaken(m.ID, nt)
}

// spanBase is what a call's span starts under: the session's context
// without its cancel (a stop signal does not end a call's records).
func (s *Session) spanBase() context.Context {
	if s.ctx == nil {
		return context.Background()
	}
	return context.WithoutCancel(s.ctx)
}

// takeCall accepts a tools/call into the queue, or answers 1001. Its
// params are read here, once.
func (s *Session) takeCall(line []byte, m *wire.Message) {
	call := wire.ReadCall(line, m)
	s.mu.Lock()
	if s.admitQ == nil || s.e.stopped.Load() {
		s.mu.Unlock()
		s.notTaken(m, &call, notTakenStopped)
		return
	}
	if s.e.draining.Load() {
		s.mu.Unlock()
		s.notTaken(m, &call, notTakenDraining)
		return
	}
	if s.waiting >= s.e.set.MaxWaiting {
		s.mu.Unlock()
		s.notTaken(m, &call, notTakenMaxWaiting)
		return
	}
	if why := s.e.bookFullWhy(); why != "" {
		s.mu.Unlock()
		s.notTaken(m, &call, notTakenBookFull(why))
		return
	}
	size := int64(len(line))
	if !s.e.takeBytes(size) {
		s.mu.Unlock()
		s.log.Warn("a call is not taken: the bytes of the calls in flight would pass maxBytesWaiting",
			slog.Int64("bytes", size), slog.Int64("maxBytesWaiting", s.e.set.MaxBytesWaiting))
		s.notTaken(m, &call, notTakenMaxBytes)
		return
	}
	s.waiting++
	s.callsWG.Add(1)
	tc := &toolCall{s: s, line: line, size: size, msg: m, call: call, clientID: bytes.Clone(m.ID), ourID: s.ids.next(), done: make(chan struct{})}
	tc.tel = s.e.tel.StartCall(s.spanBase(), m, &tc.call, s.telID.String())
	tc.ctx = tc.tel.Context()
	tc.tel.CallID(tc.ourID)
	s.callsByCli[string(m.ID)] = tc
	s.admitQ <- tc
	s.mu.Unlock()
}

// freeSlot gives back the call's place among the maxWaiting (and its bytes
// among maxBytesWaiting). It runs before the call's answer is written, so a
// client that sends its next call as soon as it reads an answer is never
// refused for a place that was about to be free. Later calls do nothing.
func (s *Session) freeSlot(tc *toolCall) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if tc.slotFree {
		return
	}
	tc.slotFree = true
	tc.tel.Record()
	s.e.giveBytes(tc.size)
	s.waiting--
	if s.waiting == 0 && s.idle != nil {
		close(s.idle)
		s.idle = nil
	}
	if s.callsByCli[string(tc.clientID)] == tc {
		delete(s.callsByCli, string(tc.clientID))
	}
}

// takeBytes counts n more bytes of calls in flight, across every session,
// unless that would pass maxBytesWaiting.
func (e *Executor) takeBytes(n int64) bool {
	e.inflightMu.Lock()
	defer e.inflightMu.Unlock()
	if e.bytesWaiting.Load()+n > e.set.MaxBytesWaiting {
		return false
	}
	e.bytesWaiting.Add(n)
	e.inflight++
	e.tel.InFlight(1, n)
	return true
}

// giveBytes ends what takeBytes counted for one call.
func (e *Executor) giveBytes(n int64) {
	e.inflightMu.Lock()
	defer e.inflightMu.Unlock()
	e.bytesWaiting.Add(-n)
	e.inflight--
	e.tel.InFlight(-1, -n)
	if e.inflight == 0 && e.idle != nil {
		close(e.idle)
		e.idle = nil
	}
}

// Drain makes the executor take no new tool calls (1001, "the executor is
// stopping") and waits until no call is in flight in any session, or ctx
// ends. It is what stdio does on SIGTERM before it stops the tool server.
func (e *Executor) Drain(ctx context.Context) {
	e.draining.Store(true)
	e.inflightMu.Lock()
	if e.inflight == 0 {
		e.inflightMu.Unlock()
		return
	}
	if e.idle == nil {
		e.idle = make(chan struct{})
	}
	idle := e.idle
	e.inflightMu.Unlock()
	select {
	case <-idle:
	case <-ctx.Done():
	}
}

// answerCall frees the call's slot and writes its answer to the client.
func (s *Session) answerCall(tc *toolCall, line []byte) {
	s.freeSlot(tc)
	s.toClient(line, tc.clientID)
}

// replyCallError frees the call's slot and answers it with an error of the
// executor's own.
func (s *Session) replyCallError(tc *toolCall, code int, message string, data []byte) {
	s.freeSlot(tc)
	s.replyError(tc.clientID, code, message, data)
}

// release ends a call's life in the session.
func (s *Session) release(tc *toolCall) {
	if tc.quota != nil {
		tc.quota.Release() // a call never sent; nothing after Commit
	}
	s.freeSlot(tc)
	tc.tel.End()
	s.callsWG.Done()
}

// admit takes one call through the rules, the check before acting and the
// copy, and sends it; or refuses it. Calls are admitted one at a time, in
// the order the client sent them.
func (s *Session) admit(tc *toolCall) {
	// A call's records are written whatever happens to the session's
	// context (a stop signal): its context (made by takeCall) keeps the
	// span, not the cancel.
	if !s.stillWanted(tc) {
		return
	}
	endJudge := tc.tel.Child(telemetry.SpanJudge)
	ok := s.judge(tc)
	endJudge(nil)
	if !ok {
		return
	}
	if s.holdsFor(tc) {
		s.holdCall(tc)
		return
	}
	s.reserve(tc)
}

// stillWanted ends a call withdrawn while it waited, or one that came
// after the server ended or the executor stopped.
func (s *Session) stillWanted(tc *toolCall) bool {
	s.mu.Lock()
	st, gone := tc.state, s.serverGone
	s.mu.Unlock()
	switch {
	case st == stateWithdrawn:
		s.appendCopy(copylog.Line{Kind: copylog.KindWithdrawn, Call: tc.ourID})
		tc.tel.Withdrawn()
	case gone:
		tc.tel.Decide(telemetry.DecisionNotTaken)
		s.replyCallError(tc, wire.CodeNoAnswer, "no answer: the tool server ended", nil)
	case s.e.stopped.Load():
		tc.tel.Decide(telemetry.DecisionNotTaken)
		s.replyCallNotTaken(tc, notTakenStopped)
	default:
		return true
	}
	s.release(tc)
	return false
}

// judge takes a call through the executor's own rules: the tool's rule,
// the amount, the content rules and the arguments' RFC 8785 form; it sets
// the call's action, amount and details. It reports whether the call goes
// on to the check before acting; otherwise the call is answered (refused,
// or forwarded when unlisted calls are).
func (s *Session) judge(tc *toolCall) bool {
	e := s.e
	name, args := tc.call.Name, tc.call.Arguments
	if !tc.call.Named || !settings.ToolNameOK(name) {
		tc.tel.Decide(telemetry.DecisionInvalid)
		s.replyCallError(tc, wire.CodeInvalidParams, "the tool name must be 1 to 128 letters, digits, _, - and .", nil)
		s.release(tc)
		return false
	}
	tc.tool = name
	rule, listed := e.pol.Rule(name)
	tc.tel.Named(name, e.serverOf(name), listed)
	if !listed {
		if e.forwardUnlisted() {
			tc.tel.Decide(telemetry.DecisionForwarded)
			s.release(tc)
			s.forward(tc.line, tc.msg)
			return false
		}
		s.refuse(tc, refusal{action: policy.ActionUnlisted, reason: "other", refused: policy.CodeUnlisted, codes: []string{policy.CodeUnlisted},
			why: "no rule in the executor's settings names the tool " + quote(name)})
		return false
	}
	if rule.Refuse {
		s.refuseByRule(tc, rule)
		return false
	}
	if !s.reserveQuota(tc, rule) {
		return false
	}
	tc.action = rule.Action
	amt, err := readAmount(rule.Amount, args)
	if err != nil {
		ae, ok := errors.AsType[*amountError](err)
		if !ok { // readAmount gives only amountErrors; any other is still a refusal
			ae = &amountError{CodeAmountUnreadable, err.Error()}
		}
		s.refuse(tc, refusal{action: rule.Action, reason: "other", refused: ae.code, codes: []string{ae.code}, why: ae.why})
		return false
	}
	tc.amount = amt
	if e.rules != nil {
		if cr := e.rules.Evaluate(name, args); cr != nil {
			s.refuse(tc, refusal{action: rule.Action, amount: amt, reason: "other", refused: cr.Code, codes: []string{cr.Code},
				rule: cr.Rule, why: cr.Message})
			return false
		}
	}
	argFP, err := argumentsFingerprint(args)
	if err != nil {
		s.refuse(tc, refusal{action: rule.Action, amount: amt, reason: "other", refused: CodeArgumentsUnreadable,
			codes: []string{CodeArgumentsUnreadable}, why: "the arguments cannot be written in the one form of RFC 8785"})
		return false
	}
	tc.details = e.callDetails(tc, argFP)
	return true
}

// argumentsFingerprint is the provared.arguments fingerprint: {} where
// there are no arguments.
func argumentsFingerprint(args []byte) (string, error) {
	if args == nil || string(args) == "null" {
		args = []byte("{}")
	}
	return canon.JCSFingerprint(args)
}

// callDetails are the documents a call's stub names before its outcome.
func (e *Executor) callDetails(tc *toolCall, argFP string) []record.Detail {
	details := []record.Detail{
		{Name: receipt.LabelArguments, SHA256: argFP},
		record.TextDetail(receipt.LabelToolName, tc.tool),
		record.TextDetail(receipt.LabelCall, tc.ourID),
		record.TextDetail(receipt.LabelRequestID, tc.ourID),
	}
	if server := e.serverOf(tc.tool); server != "" {
		details = append(details, record.TextDetail(receipt.LabelServer, server))
	}
	if tid := tc.tel.TraceID(); tid != "" {
		details = append(details, record.TextDetail(receipt.LabelTraceID, tid))
	}
	if e.rulesFP != "" {
		details = append(details, record.Detail{Name: receipt.LabelRules, SHA256: e.rulesFP})
	}
	return details
}

// reserve takes the call through the check before acting, the copy and
// the send order, one call at a time across every session, and hands it
// to send; or refuses it.
func (s *Session) reserve(tc *toolCall) {
	e := s.e
	if !s.lockAdmit(tc, nil) {
		return
	}
	tc.when = e.stubTime()
	h, d := e.ledger.Reserve(tc.proposal())
	if consent.OnlyApprovalMissing(d) {
		s.holdForPasskey(tc) // unlocks admitMu
		return
	}
	s.place(tc, h, d, nil)
}

// place ends the admission of every call, held or not: called with
// admitMu held, it unlocks it. A call the check before acting allowed (d)
// takes its place in the book (h) and is sent; otherwise undo (when not
// nil: what the caller holds for the call) runs and the call is refused.
func (s *Session) place(tc *toolCall, h *book.Reservation, d book.Decision, undo func()) {
	e := s.e
	if !d.Allowed {
		e.admitMu.Unlock()
		if undo != nil {
			undo()
		}
		s.refuse(tc, refusal{action: tc.action, amount: tc.amount, reason: d.Reason(), codes: decisionCodes(d), why: slipWhy(d)})
		return
	}
	tc.hold = h
	// From here the call has its place in the book: the scribe writes its
	// stub in this order, whatever becomes of it.
	e.toScribe(tc)
	s.startSending(tc) // under admitMu: sent in the order of the book
	e.admitMu.Unlock()
}

// startSending puts the call after the session's last call sent and sends
// it. Calls come here from admit and from an approval (hold.go).
func (s *Session) startSending(tc *toolCall) {
	s.orderMu.Lock()
	defer s.orderMu.Unlock()
	tc.prevSent, tc.sentDone = s.lastSent, make(chan struct{})
	s.lastSent = tc.sentDone
	s.sending = append(slices.DeleteFunc(s.sending, func(c *toolCall) bool {
		select {
		case <-c.done:
			return true
		default:
			return false
		}
	}), tc)
	callGoroutines.run(func() {
		s.send(tc)
		if tc.prep != nil {
			s.e.scribeCall(tc) // its stub, once it has its outcome
		}
	})
}

// send writes the call's sent line to the copy (durably) and then sends
// the call to the server. Calls of a session write their copy lines
// concurrently, so that they share one fsync, and are then sent in the
// order of their places in the book.
func (s *Session) send(tc *toolCall) {
	e := s.e
	defer close(tc.sentDone)
	s.mu.Lock()
	withdrawn := tc.state == stateWithdrawn
	tc.state = stateSent
	s.mu.Unlock()
	if withdrawn {
		tc.finish(outcome{kind: outWithdrawn})
		return
	}
	sent := copylog.Line{Kind: copylog.KindSent, When: tc.when, Call: tc.ourID, Tool: tc.tool, Action: tc.action,
		Amount: tc.amount, Slip: e.slipFP, RequestID: tc.ourID, Details: tc.details, SentAt: time.Now()}
	faultinject.Point("before-copy-sent")
	if err := tc.tel.Durable(telemetry.FileCopy, func() error { return e.copyAppend(sent) }); err != nil {
		e.stop("the copy could not be written: " + err.Error())
		tc.finish(outcome{kind: outNotSent})
		return
	}
	if tc.quota != nil {
		tc.quota.Commit()
	}
	faultinject.Point("after-copy-sent")
	if tc.prevSent != nil {
		<-tc.prevSent
	}
	out, om := tc.outgoing(tc.line, tc.msg)
	s.mu.Lock()
	select {
	case <-tc.done:
		// Cancelled by the client while its copy line was written: it is
		// not sent, and its stub says it was cancelled.
		s.mu.Unlock()
		return
	default:
	}
	if s.serverGone {
		s.mu.Unlock()
		tc.finish(outcome{kind: outServerExit})
		return
	}
	s.calls[tc.ourID] = tc
	tc.timer = time.AfterFunc(e.set.Timeout, func() {
		if tc.finish(outcome{kind: outTimeout}) {
			s.sendCancelled(tc.ourID, "the executor's time for this call ran out")
		}
	})
	s.mu.Unlock()
	if err := s.sendToServer(out, om); err != nil {
		// Its stub must not say the server had it.
		tc.log().Warn("a call could not be written to the tool server", slog.String("error", err.Error()))
		tc.finish(outcome{kind: outNotDelivered})
		return
	}
	faultinject.Point("server-working")
}

// CodeArgumentsUnreadable is the code of a call whose arguments have no
// RFC 8785 form.
const CodeArgumentsUnreadable = "arguments-unreadable"

func (e *Executor) forwardUnlisted() bool { return e.set.Unlisted == "forward" }

// appendCopy writes a line to the copy; a failure stops the executor.
func (s *Session) appendCopy(ln copylog.Line) {
	if err := s.e.copyAppend(ln); err != nil {
		s.e.stop("the copy could not be written: " + err.Error())
	}
}

// logCall logs a call's end without any argument value.
func (s *Session) logCall(tc *toolCall, what string, attrs ...slog.Attr) {
	attrs = append(append(tc.tel.LogAttrs(tc.ourID), slog.String("tool", tc.tool)), attrs...)
	s.log.LogAttrs(tc.ctx, slog.LevelInfo, what, attrs...)
}

// log is the session's logger with the call's id, trace id and span id.
func (tc *toolCall) log() *slog.Logger {
	attrs := tc.tel.LogAttrs(tc.ourID)
	args := make([]any, len(attrs))
	for i, a := range attrs {
		args[i] = a
	}
	return tc.s.log.With(args...)
}
