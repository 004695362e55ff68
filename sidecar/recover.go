package sidecar

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/receipt"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// recover writes the receipt of every call the copy shows as sent with no
// receipt: the executor stopped while the call was with the server, or the
// book could not be written. Such a call is never sent again. Its stub is
// dated when the call was sent and names executor.written-late; its
// countersignature is dated now. A call sent under another slip stops the
// start.
func (e *Executor) recover(ctx context.Context) error {
	unfinished := e.copy.Unfinished()
	if len(unfinished) == 0 {
		return nil
	}
	for _, u := range unfinished {
		if u.Sent.Slip != e.slipFP {
			return fmt.Errorf("the copy holds call %s sent under another slip (%s) with no receipt; put that slip back (agent.slip) for one start so that its receipt can be written, then this one", u.Sent.Call, u.Sent.Slip)
		}
	}
	inBook, err := stubsByCall(e.book.Path())
	if err != nil {
		return err
	}
	for _, u := range unfinished {
		if stubFP, ok := inBook[canon.Fingerprint([]byte(u.Sent.Call))]; ok {
			// The stub reached the book; only the copy's line was not written.
			if err := e.copyAppend(copylog.Line{Kind: copylog.KindLateReceipt, Call: u.Sent.Call, Stub: stubFP}); err != nil {
				return fmt.Errorf("writing the copy: %w", err)
			}
			continue
		}
		if approved, err := e.recoverApproved(ctx, u.Sent); approved || err != nil {
			if err != nil {
				return err
			}
			continue
		}
		doc := record.TextDetail(receipt.LabelError, receipt.TextStoppedWhileSent)
		if u.Outcome != nil {
			doc = *u.Outcome
		}
		details := append(append(make([]record.Detail, 0, len(u.Sent.Details)+2), u.Sent.Details...), doc, receipt.WrittenLate())
		when := u.Sent.When.UTC().Truncate(time.Second)
		amt := u.Sent.Amount
		p := book.Proposal{Slip: e.slipFP, Action: u.Sent.Action, Amount: amt, With: e.set.Service, Details: details, When: when}
		h, d := e.ledger.Reserve(p)
		if !d.Allowed {
			return fmt.Errorf("the receipt of call %s, sent %s, cannot be written: the check before acting refuses it (%v)",
				u.Sent.Call, canon.FormatTime(when), decisionCodes(d))
		}
		stubFP, err := e.writeStub(ctx, h, receipt.StubFields{Slip: e.slipFP, Action: u.Sent.Action, Amount: amt, With: e.set.Service,
			Details: details, When: when}, time.Now().UTC())
		if err != nil {
			h.Release()
			return fmt.Errorf("writing the receipt of call %s: %w", u.Sent.Call, err)
		}
		if err := e.copyAppend(copylog.Line{Kind: copylog.KindLateReceipt, Call: u.Sent.Call, Stub: stubFP}); err != nil {
			return fmt.Errorf("writing the copy: %w", err)
		}
		if when.After(e.lastWhen) {
			e.lastWhen = when
		}
		e.log.Warn("wrote the receipt of a call the executor was sending when it stopped",
			slog.String("call", u.Sent.Call), slog.String("stub", stubFP), slog.Bool("outcomeKnown", u.Outcome != nil))
	}
	return nil
}

// stubsByCall reads the book's stubs and maps the fingerprint each names
// under executor.call to the stub's fingerprint. Only used at a start with
// unfinished calls; the book was verified by OpenBook already.
func stubsByCall(path string) (map[string]string, error) {
	out := map[string]string{}
	err := book.ReadFileEntries(path, func(e book.FileEntry) error {
		if e.Kind != book.KindStub {
			return nil
		}
		for _, d := range e.Details {
			if d.Name == receipt.LabelCall {
				out[d.SHA256] = e.Fingerprint
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// recoverApproved writes the late stub of an approved call: exactly the
// details its approval names, with the approval on its line (the
// written-late and error documents stay in the copy). It reports whether
// the call had a kept approval.
func (e *Executor) recoverApproved(ctx context.Context, sent copylog.Line) (bool, error) {
	rec, err := e.kept.Read(sent.Call)
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
	if err := e.kept.Forget(sent.Call); err != nil {
		e.log.Warn("a kept approval could not be removed", slog.String("call", sent.Call), slog.String("error", err.Error()))
	}
	e.log.Warn("wrote the receipt of an approved call the executor was sending when it stopped",
		slog.String("call", sent.Call), slog.String("stub", line.Fingerprint()))
	return true, nil
}
