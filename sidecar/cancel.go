package sidecar

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
	"github.com/seed-6e06167c/mcp-executor/sidecar/boot"
	"github.com/seed-6e06167c/mcp-executor/sidecar/page"
)

// The person's cancellation of the slip (docs/design/page.md, "What the
// engine must call"): a cancellation the person's signer drops beside the
// slip (page.CancellationPath) is honoured at once: no later call under
// the slip is sent, the calls held for approval are refused (held.Holds),
// and the cancellation goes into the book after the stubs of the calls
// already sent.

// CodeAfterCancellation is the code of a call refused after the slip was
// cancelled.
const CodeAfterCancellation = "after-cancellation"

// openCancellation reads a cancellation already at one of the slip's
// cancellation places (page.CancellationPaths: beside the copy, where the
// page writes it, and beside the slip), putting it in the book when it is
// not there yet, and watches them for one for the rest of the run. Called by Open before openApprovals.
func (e *Executor) openCancellation(sl *slip.Slip) error {
	paths := page.CancellationPaths(e.set)
	c, path, err := page.FirstCancellation(paths, sl)
	switch {
	case err == nil:
		if err := boot.AddCancellation(e.book, c); err != nil {
			return err
		}
		e.holds.Cancel()() // nothing is held yet
		e.log.Warn("the slip is cancelled: every call under it is refused", slog.String("slip", e.slipFP), slog.String("cancellation", c.ID), slog.String("file", path))
		return nil
	case errors.Is(err, os.ErrNotExist):
	default:
		e.log.Warn("a cancellation file of the slip does not check; the slip is not taken as cancelled", slog.String("error", err.Error()))
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	e.stopWatch = func() {
		cancel()
		<-done
	}
	go func() {
		defer close(done)
		page.WatchCancellations(ctx, paths, sl, 0, e.log, e.honourCancellation)
	}()
	return nil
}

// isCancelled reports whether the slip was cancelled.
func (e *Executor) isCancelled() bool { return e.holds.Cancelled() }

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

// cancellationWait bounds how long a cancellation waits for the stubs of
// the calls already sent before it goes into the book.
func (e *Executor) cancellationWait() time.Duration { return e.set.Timeout + time.Minute }

// honourCancellation takes a cancellation that checks: no call under the
// slip is admitted from now on, the calls held for approval are refused,
// and the cancellation goes into the book once the stubs of the calls
// already sent are there.
func (e *Executor) honourCancellation(c *slip.Cancellation) {
	e.admitMu.Lock()
	endWaits := e.holds.Cancel()
	e.admitMu.Unlock()
	e.log.Warn("the slip is cancelled: every later call under it is refused", slog.String("slip", e.slipFP), slog.String("cancellation", c.ID))
	endWaits()
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
	if err := boot.AddCancellation(e.book, c); err != nil {
		e.log.Error("the cancellation could not be written to the book", slog.String("error", err.Error()))
		e.stop("the book could not take the slip's cancellation: " + err.Error())
	}
}
