package sidecar

import (
	"context"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/receipts/receipt"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// scribe writes the stubs of sent calls in the order their places in the
// book were reserved. It signs each stub as soon as the call has ended and
// the stub before it is on its way to the book; appending (with its fsync,
// shared by the stubs waiting together), the copy's receipt line and the
// answer to the client follow in a goroutine of their own, so that calls
// in flight together share their fsyncs.
func (e *Executor) scribe() {
	defer close(e.scribeDone)
	for tc := range e.scribeQ {
		<-tc.done
		e.commit(tc)
	}
	e.commits.Wait()
}

// commit signs one call's stub and countersignature and hands them to
// finishCommit; or ends a call that was never sent.
func (e *Executor) commit(tc *toolCall) {
	s := tc.s
	out := tc.out
	switch out.kind {
	case outNotSent:
		tc.decide(DecisionNoRecord)
		tc.hold.Release()
		e.forgetApproval(tc)
		e.later(func() {
			s.replyCallError(tc, wire.CodeNotTaken, "not taken: the executor could not record the call", nil)
			s.release(tc)
		})
		return
	case outWithdrawn:
		tc.decide(DecisionWithdrawn)
		tc.hold.Release()
		e.forgetApproval(tc)
		s.appendCopy(copylog.Line{Kind: copylog.KindWithdrawn, Call: tc.ourID})
		s.release(tc)
		return
	}
	faultPoint("after-answer")
	doc := out.document()
	ctx := tc.ctx
	if e.bookBroken.Load() {
		tc.hold.Release()
		e.later(func() {
			e.notWritten(tc, doc, "an earlier receipt could not be written")
			s.release(tc)
		})
		return
	}
	pos, err := tc.hold.Position(ctx)
	var line book.SignedStub
	if err == nil {
		details, approvalFP := tc.stubDetails(doc)
		f := receipt.StubFields{Slip: e.slipFP, Seq: pos.Seq, Previous: pos.Previous, Action: tc.action, Amount: tc.amount,
			With: e.set.Service, Details: details, When: tc.when, Approval: approvalFP}
		endSign := tc.child(spanSign)
		line, err = f.SignLine(ctx, e.agent, e.exec, time.Now().UTC())
		endSign(err)
		line.Approval = tc.approval
	}
	if err != nil {
		e.bookBroken.Store(true)
		e.stop("the receipt could not be made: " + err.Error())
		tc.hold.Release()
		why := err.Error()
		e.later(func() {
			e.notWritten(tc, doc, why)
			s.release(tc)
		})
		return
	}
	// The next stub's Position waits until this one is in the book's queue
	// (or its reservation was released), so the chain stays in order.
	e.later(func() { e.finishCommit(tc, line, doc) })
}

// later runs f (the rest of a call's end: what is written to its client)
// in a goroutine of its own, so that a client that does not read holds up
// no other call's stub. The scribe waits for it before it ends.
func (e *Executor) later(f func()) {
	e.commits.Add(1)
	go func() {
		defer e.commits.Done()
		f()
	}()
}

// finishCommit appends the stub line, writes the copy's receipt line and
// answers the client.
func (e *Executor) finishCommit(tc *toolCall, line book.SignedStub, doc record.Detail) {
	s := tc.s
	defer s.release(tc)
	out := tc.out
	err := tc.durable(fileBook, func() error { return e.book.AppendSigned(tc.hold, line) })
	if err != nil {
		e.bookBroken.Store(true)
		e.stop("the book could not be written: " + err.Error())
		e.notWritten(tc, doc, err.Error())
		return
	}
	faultPoint("after-stub")
	e.forgetApproval(tc)
	e.bookAppendedSigned(tc.ctx, line)
	stubFP := line.Fingerprint()
	if err := e.copyAppend(copylog.Line{Kind: copylog.KindReceipt, Call: tc.ourID, Stub: stubFP,
		Outcome: &doc}); err != nil {
		e.stop("the copy could not be written: " + err.Error())
	}
	tc.decide(DecisionAllowed)
	tc.span.SetAttributes(attribute.String(AttrStub, stubFP))
	switch {
	case out.kind == outResult || out.kind == outError || out.kind == outUnreadable && out.line != nil:
		s.logCall(tc, "call answered", slog.String("stub", stubFP), slog.Bool("serverError", out.kind == outError),
			slog.Bool("unreadable", out.kind == outUnreadable))
		s.answerCall(tc, wire.SpliceID(out.line, out.idSpan, tc.clientID))
	default: // no answer, or one that cannot reach the client as it is
		tc.span.SetAttributes(attribute.String(AttrErrorType, outcomeErrorType(out.kind)))
		tc.span.SetStatus(codes.Error, out.noAnswerText())
		s.logCall(tc, "call had no answer", slog.String("stub", stubFP), slog.String("why", out.noAnswerText()))
		data := []byte(`{"red.prova/stub":`)
		data = append(append(data, jsonString(stubFP)...), '}')
		s.replyCallError(tc, wire.CodeNoAnswer, out.noAnswerText(), data)
	}
}

// writeStub takes the reservation's place in the chain, signs and
// countersigns the stub and appends it to the book, durably.
func (e *Executor) writeStub(ctx context.Context, h *book.Reservation, f receipt.StubFields, countersignedAt time.Time) (string, error) {
	pos, err := h.Position(ctx)
	if err != nil {
		return "", err
	}
	f.Seq, f.Previous = pos.Seq, pos.Previous
	line, err := f.SignLine(ctx, e.agent, e.exec, countersignedAt)
	if err != nil {
		return "", err
	}
	if err := e.book.AppendSigned(h, line); err != nil {
		return "", err
	}
	return line.Fingerprint(), nil
}

// AttrStub is the span attribute naming a call's stub.
const AttrStub = "mcp_executor.stub"

// notWritten records in the copy what the executor knew of a call whose
// receipt could not be written (the next start writes it from this line)
// and tells the client.
func (e *Executor) notWritten(tc *toolCall, doc record.Detail, why string) {
	s := tc.s
	tc.hold.Release()
	if err := e.copyAppend(copylog.Line{Kind: copylog.KindNotWritten, Call: tc.ourID,
		Outcome: &doc, Reason: why}); err != nil {
		e.stop("the copy could not be written: " + err.Error())
	}
	tc.decide(DecisionAllowed) // it was sent; its receipt is written at the next start
	tc.span.SetAttributes(attribute.String(AttrErrorType, "receipt-not-written"))
	tc.span.SetStatus(codes.Error, "receipt not written")
	tc.log().Error("the receipt of a call could not be written", slog.String("why", why))
	s.replyCallError(tc, codeInternalError, "the receipt of this call could not be written; the executor takes no more calls until it is started again", nil)
}
