package sidecar

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/internal/faultinject"
	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/receipts/receipt"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/sidecar/telemetry"
	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// The scribe's order: the stubs of sent calls are written in the order
// their places in the book were reserved. Each call, once reserved, is put
// last in that order (toScribe, under admitMu); its own goroutine (the one
// that sends it) then waits for its outcome and for the call before it to
// have fixed its stub, and fixes its own stub content at the place after
// that one (a stub's fingerprint is that of its content, known before it
// is signed), or at the book's Position for the first call. It hands that
// place on at once and goes on alone: signing, appending (with its fsync,
// shared by the stubs waiting together), the answer to the client and the
// copy's receipt line; so calls in flight together are signed on every
// core at once and share their fsyncs, and a client that does not read
// holds up no other call's stub. Each stub is appended only at its turn
// (Position), after the stub before it, and only at the place it was made
// for.

// prepSlot is a call's place in the scribe's order: done is closed once
// the call has fixed its stub (or ended without one), and tip is then the
// place of the last stub fixed.
type prepSlot struct {
	done chan struct{}
	tip  chainTip
}

// toScribe puts a reserved call last in the scribe's order. Callers hold
// admitMu and then start sending the call (startSending), whose goroutine
// writes its stub (scribeCall).
func (e *Executor) toScribe(tc *toolCall) {
	tc.prevPrep, tc.prep = e.lastPrep, &prepSlot{done: make(chan struct{})}
	e.lastPrep = tc.prep
	e.commits.Add(1)
}

// scribeCall writes the stub of a call put in the scribe's order, in the
// call's own goroutine, once the call has its outcome.
func (e *Executor) scribeCall(tc *toolCall) {
	defer e.commits.Done()
	<-tc.done
	var tip chainTip
	if p := tc.prevPrep; p != nil {
		<-p.done
		tip = p.tip
		tc.prevPrep = nil
	}
	rest := e.commit(tc, &tip)
	tc.prep.tip = tip
	close(tc.prep.done)
	if rest != nil {
		rest()
	}
}

// chainTip is the place of the last stub fixed in the scribe's order: the
// next stub's place follows it.
type chainTip struct {
	seq int64
	fp  string
	set bool
}

// commit fixes one call's stub and returns what is left to do once its
// place is handed on (finishCommit); or ends a call that was never sent.
// It never waits on a client.
func (e *Executor) commit(tc *toolCall, tip *chainTip) (rest func()) {
	s := tc.s
	out := tc.out
	switch out.kind {
	case outNotSent:
		tc.tel.Decide(telemetry.DecisionNoRecord)
		tc.hold.Release()
		e.forgetApproval(tc)
		return func() {
			s.replyCallNotTaken(tc, notTakenNotRecorded)
			s.release(tc)
		}
	case outWithdrawn:
		tc.tel.Decide(telemetry.DecisionWithdrawn)
		tc.hold.Release()
		e.forgetApproval(tc)
		return func() {
			s.appendCopy(copylog.Line{Kind: copylog.KindWithdrawn, Call: tc.ourID})
			s.release(tc)
		}
	}
	faultinject.Point("after-answer")
	doc := out.document()
	if e.bookBroken.Load() {
		tc.hold.Release()
		return func() {
			e.notWritten(tc, doc, "an earlier receipt could not be written")
			s.release(tc)
		}
	}
	details, approvalFP := tc.stubDetails(doc)
	f := receipt.StubFields{Slip: e.slipFP, Action: tc.action, Amount: tc.amount,
		With: e.set.Service, Details: details, When: tc.when, Approval: approvalFP}
	var prep receipt.PreparedStub
	var err error
	if tip.set {
		f.Seq, f.Previous = tip.seq+1, tip.fp
	} else {
		var pos book.Position
		pos, err = tc.hold.Position(tc.ctx)
		f.Seq, f.Previous = pos.Seq, pos.Previous
	}
	if err == nil {
		prep, err = f.Prepare()
	}
	if err != nil {
		return e.signFailed(tc, doc, err)
	}
	*tip = chainTip{seq: f.Seq, fp: prep.Fingerprint, set: true}
	return func() { e.finishCommit(tc, f, prep, doc) }
}

// signFailed ends a call whose stub could not be made: the book takes no
// more stubs, the executor stops, and the copy keeps what it knew (in rest).
func (e *Executor) signFailed(tc *toolCall, doc record.Detail, err error) (rest func()) {
	e.bookBroken.Store(true)
	e.stop("the receipt could not be made: " + err.Error())
	tc.hold.Release()
	why := err.Error()
	return func() {
		e.notWritten(tc, doc, why)
		tc.s.release(tc)
	}
}

// signAt signs the prepared stub and then, at the reservation's turn
// (every stub before it appended or released), checks that the book gives
// it the place it was prepared at: the scribe prepares a stub after the
// one it prepared last, and only a stub that could not be written (which
// breaks the book) can leave that place to another. broken is true when an
// earlier stub could not be written: this one is then not appended.
func (e *Executor) signAt(tc *toolCall, f receipt.StubFields, prep receipt.PreparedStub) (line book.SignedStub, broken bool, err error) {
	endSign := tc.tel.Child(telemetry.SpanSign)
	line, err = prep.Sign(tc.ctx, e.agent, e.exec, time.Now().UTC())
	endSign(err)
	if err != nil {
		return book.SignedStub{}, false, err
	}
	pos, err := tc.hold.Position(tc.ctx)
	if err != nil {
		return book.SignedStub{}, false, err
	}
	if e.bookBroken.Load() {
		return book.SignedStub{}, true, nil
	}
	if pos.Seq != f.Seq || pos.Seq > 0 && pos.Previous != f.Previous {
		return book.SignedStub{}, false, fmt.Errorf("the stub was made for place %d of the chain, but the book gives it place %d", f.Seq, pos.Seq)
	}
	return line, false, nil
}

// finishCommit signs the stub, appends it at its turn, answers the client
// and then writes the copy's receipt line (see copylog's package doc for
// why that line may come after the answer).
func (e *Executor) finishCommit(tc *toolCall, f receipt.StubFields, prep receipt.PreparedStub, doc record.Detail) {
	s := tc.s
	defer s.release(tc)
	out := tc.out
	line, broken, err := e.signAt(tc, f, prep)
	if broken {
		e.notWritten(tc, doc, "an earlier receipt could not be written")
		return
	}
	if err != nil {
		e.bookBroken.Store(true)
		e.stop("the receipt could not be made: " + err.Error())
		e.notWritten(tc, doc, err.Error())
		return
	}
	line.Approval = tc.approval
	err = tc.tel.Durable(telemetry.FileBook, func() error { return e.book.AppendSigned(tc.hold, line) })
	if err != nil {
		e.bookBroken.Store(true)
		e.stop("the book could not be written: " + err.Error())
		e.notWritten(tc, doc, err.Error())
		return
	}
	faultinject.Point("after-stub")
	e.forgetApproval(tc)
	stubFP := line.Fingerprint()
	tc.tel.Decide(telemetry.DecisionAllowed)
	tc.tel.Stub(stubFP)
	switch {
	case out.kind == outResult || out.kind == outError || out.kind == outUnreadable && out.line != nil:
		s.answerCall(tc, wire.SpliceID(out.line, out.idSpan, tc.clientID))
		s.logCall(tc, "call answered", slog.String("stub", stubFP), slog.Bool("serverError", out.kind == outError),
			slog.Bool("unreadable", out.kind == outUnreadable))
	default: // no answer, or one that cannot reach the client as it is
		tc.tel.NoAnswer(outcomeErrorType(out.kind), out.noAnswerText())
		data := []byte(`{"red.prova/stub":`)
		data = append(append(data, wire.Quote(stubFP)...), '}')
		s.replyCallError(tc, wire.CodeNoAnswer, out.noAnswerText(), data)
		s.logCall(tc, "call had no answer", slog.String("stub", stubFP), slog.String("why", out.noAnswerText()))
	}
	// Off the answer's path, and not synced on its own (the next sent
	// line's sync or the copy's close makes it durable): the stub is
	// durable, and a stop before this line is durable leaves a call the
	// next start finds in the book (a late-receipt line), never one it
	// writes or sends again.
	faultinject.Point("after-answer-sent")
	if err := e.copyAppendUnsynced(copylog.Line{Kind: copylog.KindReceipt, Call: tc.ourID, Stub: stubFP,
		Outcome: &doc, Server: tc.tel.ServerTime()}); err != nil {
		e.stop("the copy could not be written: " + err.Error())
	}
	e.bookAppendedSigned(tc.ctx, line)
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
	tc.tel.Decide(telemetry.DecisionAllowed) // it was sent; its receipt is written at the next start
	tc.tel.ReceiptNotWritten()
	tc.log().Error("the receipt of a call could not be written", slog.String("why", why))
	s.replyCallError(tc, wire.CodeInternalError, "the receipt of this call could not be written; the executor takes no more calls until it is started again", nil)
}
