package sidecar

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/receipts/consent"
	"github.com/seed-6e06167c/mcp-executor/receipts/receipt"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/sidecar/approval"
	"github.com/seed-6e06167c/mcp-executor/sidecar/approvalkube"
	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// Calls held for a person's approval (issue 18; docs/design/approvals.md).
// A call whose tool rule says "approve" is judged (rule, amount, content
// rules, arguments) and checked before acting as every call is, then held:
// it keeps its maxWaiting slot and counts against the slip's limits
// (book.Ledger.Hold) without a place in the order of stubs, while the hub
// asks every channel (the queue folder, the agent's client). Approved, it is
// checked again and reserved (book.Held.Reserve), takes its place in the
// book, and is sent with its stub naming the answer (executor.approval).
// Refused (declined, expired, burned, no channel), it gets a denial with
// reason "other" and never reaches the server.

// approvals are the executor's approval parts; nil when no tool rule holds
// calls for approval and the copy holds no request.
type approvals struct {
	hub   *approval.Hub
	queue *approval.Queue
}

// openApprovals makes the queue and the hub after the recovery of unfinished
// calls: the hub rebuilds its requests from the copy and asks the pending
// ones again. approveSession approves every held call of this process.
func (e *Executor) openApprovals(approveSession bool) error {
	lines := e.copy.ApprovalLines() // the copy keeps only its approval lines (copylog reads line by line)
	if !e.holdsAny() && !copyHasRequests(lines) && !e.wantsPasskey() {
		if approveSession {
			e.log.Warn("--approve-session is given, and no tool rule holds calls for approval")
		}
		return nil
	}
	q, err := approval.NewQueue(e.set.Approvals.Queue, 0, e.log)
	if err != nil {
		return err
	}
	channels := append([]approval.Channel{q}, e.pageChannels(e.set.Approvals.Queue)...)
	kube, err := approvalkube.FromSettings(e.set, e.log)
	if err != nil {
		return fmt.Errorf("approvals: the Kubernetes channel (approvals.kubernetes): %w", err)
	}
	if kube != nil {
		channels = append(channels, kube)
	}
	hub, err := approval.NewHub(approval.Options{Copy: e.copy, Channels: channels,
		PendingAfter: e.set.Approvals.PendingAfter, ApproveSession: approveSession, Logger: e.log, Redact: e.RedactArgs}, lines)
	if err != nil {
		return fmt.Errorf("approvals: rebuilding the requests from the copy: %w", err)
	}
	if approveSession {
		e.log.Warn("--approve-session: every call held for approval in this process is approved without asking anyone; each such answer is recorded with channel \"session\"")
	}
	e.appr = &approvals{hub: hub, queue: q}
	e.passkeyHub(hub) // a cancellation (passkeyhold.go) withdraws the slip's requests
	return nil
}

// closeApprovals ends the asking; calls still held get ErrClosed. Before
// the copy closes.
func (e *Executor) closeApprovals() {
	if e.appr != nil {
		e.appr.hub.Close()
	}
}

func (e *Executor) holdsAny() bool {
	for _, t := range e.set.Tools {
		if t.Approve != nil {
			return true
		}
	}
	return false
}

func copyHasRequests(lines []copylog.Line) bool {
	for _, ln := range lines {
		if ln.Kind == copylog.KindApprovalRequest {
			return true
		}
	}
	return false
}

// holdsFor says whether the call's tool rule holds it for approval.
func (s *Session) holdsFor(tc *toolCall) bool {
	t, ok := s.e.toolRule(tc.tool)
	return ok && t.Approve != nil
}

// clientState is what the session knows of its client for asking it:
// what initialize declared. Guarded by its mu.
type clientState struct {
	mu      sync.Mutex
	version string // the protocolVersion the client asked for in initialize
	elicit  bool   // it declared form elicitation
	asks    map[string]chan elicitReply
	n       int
	gone    bool // the client's input ended: it can answer nothing more
}

type elicitReply struct {
	result []byte
	err    error
}

// noteInitialize reads the client's protocol version and elicitation
// capability from its initialize request.
func (s *Session) noteInitialize(m *wire.Message) {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
		Capabilities    struct {
			Elicitation *struct {
				Form *json.RawMessage `json:"form"`
				URL  *json.RawMessage `json:"url"`
			} `json:"elicitation"`
		} `json:"capabilities"`
	}
	if m.Params == nil || json.Unmarshal(m.Params, &p) != nil {
		return
	}
	el := p.Capabilities.Elicitation
	cs := &s.peer
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.version = p.ProtocolVersion
	// {} is form elicitation (2025-06-18 knows only form); a client that
	// names only url cannot show a form.
	cs.elicit = el != nil && (el.Form != nil || el.URL == nil)
}

// clientEnded fails the elicitations still waiting when the client's input
// ends: a lost session is no (the other channels still count).
func (s *Session) clientEnded() {
	cs := &s.peer
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.gone = true
	for id, ch := range cs.asks {
		ch <- elicitReply{err: errors.New("the client's input ended before it answered")}
		delete(cs.asks, id)
	}
}

// elicitIDPrefix begins the ids of the executor's own elicitation/create
// requests to the client.
const elicitIDPrefix = IDPrefix + "ask-"

// takeElicitReply takes the client's answer to one of the executor's own
// elicitation requests; it reports whether the line was one (it then never
// reaches the server).
func (s *Session) takeElicitReply(m *wire.Message) bool {
	id, ok := wire.Unquote(m.ID)
	if !ok || len(id) <= len(elicitIDPrefix) || id[:len(elicitIDPrefix)] != elicitIDPrefix {
		return false
	}
	cs := &s.peer
	cs.mu.Lock()
	ch := cs.asks[id]
	delete(cs.asks, id)
	cs.mu.Unlock()
	if ch == nil {
		s.log.Info("an answer to an elicitation the executor no longer waits for is dropped")
		return true
	}
	r := elicitReply{result: bytes.Clone(m.Result)}
	if m.Error != nil {
		r = elicitReply{err: fmt.Errorf("the client answered the elicitation with an error: %s", wire.Cut(string(m.Error)))}
	}
	ch <- r
	return true
}

// elicitChannel is the call's client as a channel, when it can be asked.
func (s *Session) elicitChannel() approval.Channel {
	if !s.e.set.Approvals.Elicit {
		return nil
	}
	cs := &s.peer
	cs.mu.Lock()
	ok, version := cs.elicit, cs.version
	cs.mu.Unlock()
	if !ok || version < "2025-06-18" {
		return nil
	}
	return &approval.Elicitation{Send: s.sendElicitation, WithMode: version >= "2025-11-25", Logger: s.log}
}

// sendElicitation sends elicitation/create to the client under an id of the
// executor's own and waits for its answer.
func (s *Session) sendElicitation(ctx context.Context, params []byte) ([]byte, error) {
	cs := &s.peer
	ch := make(chan elicitReply, 1)
	cs.mu.Lock()
	if cs.gone {
		cs.mu.Unlock()
		return nil, errors.New("the client's input ended")
	}
	if cs.asks == nil {
		cs.asks = map[string]chan elicitReply{}
	}
	cs.n++
	id := elicitIDPrefix + strconv.Itoa(cs.n) + "-" + s.ids.next()[len(IDPrefix):]
	cs.asks[id] = ch
	cs.mu.Unlock()
	line := []byte(`{"jsonrpc":"2.0","id":`)
	line = append(line, wire.Quote(id)...)
	line = append(line, `,"method":"elicitation/create","params":`...)
	line = append(line, params...)
	line = append(line, '}')
	s.toClient(line)
	select {
	case r := <-ch:
		return r.result, r.err
	case <-ctx.Done():
		cs.mu.Lock()
		delete(cs.asks, id)
		cs.mu.Unlock()
		c := []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`)
		c = append(c, wire.Quote(id)...)
		c = append(c, `,"reason":"the request for approval is over"}}`...)
		s.toClient(c)
		return nil, ctx.Err()
	}
}

// held is a call's hold: set by holdCall.
type held struct {
	cancel context.CancelFunc // ends the wait (the client cancelled the call)
	ledger *book.Held
}

// holdCall holds a judged call for approval. It checks the call before
// acting (a refused call is never held), counts it as held, and waits for
// the hub in a goroutine of its own, so that the session's later calls are
// admitted meanwhile.
func (s *Session) holdCall(tc *toolCall) {
	e := s.e
	if e.appr == nil {
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
	go s.awaitApproval(s.holdUnder(tc, lh), tc)
}

// holdUnder marks tc held under the ledger's hold lh and returns the
// context its wait runs under: it ends when the client withdraws the call
// (at once when it did already) or the slip is cancelled (trackHeld,
// passkeyhold.go).
func (s *Session) holdUnder(tc *toolCall, lh *book.Held) context.Context {
	ctx, cancel := context.WithCancel(s.ctx)
	s.e.trackHeld(tc, cancel)
	s.mu.Lock()
	withdrawn := tc.state == stateWithdrawn
	tc.held = &held{cancel: cancel, ledger: lh}
	s.mu.Unlock()
	if withdrawn {
		cancel()
	}
	return ctx
}

// proposal is the call as the check before acting sees it.
func (tc *toolCall) proposal() book.Proposal {
	e := tc.s.e
	return book.Proposal{Slip: e.slipFP, Action: tc.action, Amount: tc.amount, With: e.set.Service, Details: tc.details, When: tc.when}
}

// waitHub holds the call at the hub, with the wait as the call's
// approval.hold span and its length on the call's span. When the slip was
// cancelled meanwhile, or the wait ended in an error, it lets go of the
// call's ledger hold, answers the call and returns false; otherwise the
// caller goes on with the hub's result.
func (s *Session) waitHub(ctx context.Context, tc *toolCall, c approval.Call) (approval.Result, bool) {
	e := s.e
	started := time.Now()
	endHold := tc.tel.HoldStarted()
	res, err := e.appr.hub.Hold(ctx, c)
	endHold(err)
	tc.tel.HeldFor(time.Since(started))
	if e.isCancelled() {
		tc.held.ledger.Release()
		e.withdrawHeld()
		s.refuseCancelled(tc)
		return res, false
	}
	if err != nil {
		tc.held.ledger.Release()
		s.heldEnded(tc, err)
		return res, false
	}
	return res, true
}

// awaitApproval waits for the hub's answer and sends, answers or refuses
// the call.
func (s *Session) awaitApproval(ctx context.Context, tc *toolCall) {
	e := s.e
	defer tc.held.cancel()
	defer e.untrackHeld(tc)
	c, ok := s.approvalCall(tc)
	if !ok {
		tc.held.ledger.Release()
		return
	}
	res, ok := s.waitHub(ctx, tc, c)
	if !ok {
		return
	}
	switch {
	case res.Outcome == approval.Pending:
		tc.held.ledger.Release()
		s.answerPending(tc, res, c.NoWait)
		return
	case res.Outcome != approval.Approved:
		tc.held.ledger.Release()
		why := map[approval.Outcome]string{
			approval.Declined:  "a person declined this call",
			approval.Expired:   "no person approved this call in time",
			approval.Burned:    "the approval this call names was for other arguments: both are refused",
			approval.NoChannel: "this call needs a person's approval, and no one can be asked: the client cannot show a form and no other channel is open",
			approval.Used:      "the approval this call names was used already",
			approval.Crowded:   "too many calls wait for a person's approval",
		}[res.Outcome]
		s.refuse(tc, refusal{action: tc.action, amount: tc.amount, reason: "other", refused: res.Outcome.Code(),
			codes: []string{res.Outcome.Code()}, why: why})
		return
	}
	// Approved: the wait is the call's approval.hold child span, and its
	// time is left out of the executor's own time (telemetry.go).
	tc.tel.Approved(res.Request.ID)
	tc.details = append(tc.details, record.Detail{Name: receipt.LabelApproval, SHA256: res.Approval})
	// the slip may have been cancelled while the call waited (passkeyhold.go)
	if !s.lockAdmit(tc, tc.held.ledger.Release) {
		return
	}
	tc.when = e.stubTime()
	h, d := tc.held.ledger.Reserve(tc.proposal())
	if !d.Allowed {
		e.admitMu.Unlock()
		tc.held.ledger.Release()
		s.refuse(tc, refusal{action: tc.action, amount: tc.amount, reason: d.Reason(), codes: decisionCodes(d), why: slipWhy(d)})
		return
	}
	tc.hold = h
	e.toScribe(tc)
	s.startSending(tc)
	e.admitMu.Unlock()
}

// approvalCall is the call as the hub holds it. For a 2026-07-28 retry that
// carries the answer in inputResponses, the answer is given to the hub and
// stripped from the call before it can reach the server. ok is false when
// the call was answered here.
func (s *Session) approvalCall(tc *toolCall) (approval.Call, bool) {
	e := s.e
	c := approval.Call{CallID: tc.ourID, Tool: tc.tool, Action: tc.action, Amount: tc.amount, Slip: e.slipFP,
		Arguments: tc.call.Arguments, Timeout: e.set.ApprovalTimeout(tc.tool)}
	c.Named = tc.call.Approval
	if tc.call.ProtocolVersion >= "2026-07-28" {
		if tc.call.ClientElicitation && e.set.Approvals.Elicit {
			c.NoWait = true
		}
		if !s.takeInputAnswer(tc, &c) {
			return c, false
		}
		return c, true
	}
	if ch := s.elicitChannel(); ch != nil {
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
		if err := s.e.appr.hub.Answer(approval.Answer{Request: id, Approved: yes && err == nil, Channel: approval.ChannelInput, Who: approval.WhoClient}); err != nil {
			s.log.Info("a retried call's answer was not taken", slog.String("call", tc.ourID), slog.String("error", err.Error()))
		}
		c.Named = id
	}
	line, err := stripInput(tc.line, tc.msg, id)
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

// stripInput takes inputResponses[red.prova/approval] (and inputResponses
// when nothing else is left in it) and a requestState naming the request id
// out of a tools/call line.
func stripInput(line []byte, m *wire.Message, id string) ([]byte, error) {
	var p map[string]json.RawMessage
	if err := json.Unmarshal(m.Params, &p); err != nil {
		return nil, err
	}
	var ir map[string]json.RawMessage
	if err := json.Unmarshal(p["inputResponses"], &ir); err != nil {
		return nil, err
	}
	delete(ir, approval.InputKey)
	if len(ir) == 0 {
		delete(p, "inputResponses")
	} else {
		b, err := json.Marshal(ir)
		if err != nil {
			return nil, err
		}
		p["inputResponses"] = b
	}
	if rs, ok := p["requestState"]; ok {
		if v, _ := wire.Unquote(rs); v == id {
			delete(p, "requestState")
		}
	}
	b, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	return wire.SpliceID(line, m.ParamsSpan, b), nil
}

// heldEnded ends a call whose wait ended without an answer: withdrawn by
// the client, the session or executor ending, or the copy refusing a line.
func (s *Session) heldEnded(tc *toolCall, err error) {
	s.mu.Lock()
	withdrawn := tc.state == stateWithdrawn
	s.mu.Unlock()
	switch {
	case withdrawn:
		s.appendCopy(copylog.Line{Kind: copylog.KindWithdrawn, Call: tc.ourID})
		tc.tel.Withdrawn()
	case errors.Is(err, context.Canceled), errors.Is(err, approval.ErrClosed):
		s.replyCallNotTaken(tc, notTakenDraining)
	default:
		s.e.stop("the copy could not be written: " + err.Error())
		s.replyCallNotTaken(tc, notTakenRequestNotWritten)
	}
	s.release(tc)
}

// answerPending answers a call still waiting for a person: for a 2026-07-28
// client an input_required result asking it; otherwise a tool result
// (isError) saying so, with the request's id in _meta. No stub, no denial.
func (s *Session) answerPending(tc *toolCall, res approval.Result, input bool) {
	var result []byte
	var err error
	if input {
		result, err = approval.InputRequiredResult(res.Request)
	} else {
		result, err = json.Marshal(map[string]any{
			"content": []any{map[string]any{"type": "text", "text": approval.PendingText(res.Request)}},
			"isError": true, "_meta": approval.PendingMeta(res.Request)})
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
	s.logCall(tc, "the call waits for a person's approval", slog.String("request", res.Request.ID))
	s.answerCall(tc, line)
	s.release(tc)
}

// cancelHoldLocked ends the wait of a held call the client cancelled. Called with
// s.mu held.
func (tc *toolCall) cancelHoldLocked() {
	if tc.held != nil {
		tc.held.cancel()
	}
}
