package boot

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
)

// AddSlip appends the slip to the book unless it is there already.
func AddSlip(bk *book.Book, sl *slip.Slip) error {
	err := bk.Append(book.Line{Slip: sl.Record})
	if err == nil {
		return nil
	}
	if c := problem.Code(err); c == "duplicate-slip" || c == "duplicate-id" {
		there, serr := inBook(bk.Path(), book.KindSlip, sl.Fingerprint)
		if serr != nil {
			return serr
		}
		if there {
			return nil
		}
	}
	return fmt.Errorf("adding the slip to the book: %w", err)
}

// AddCancellation appends the slip's cancellation to the book unless it is
// there already.
func AddCancellation(bk *book.Book, c *slip.Cancellation) error {
	there, err := inBook(bk.Path(), book.KindCancellation, c.Record.Fingerprint)
	if err != nil {
		return fmt.Errorf("reading the book for the slip's cancellation: %w", err)
	}
	if there {
		return nil
	}
	if err := bk.Append(book.Line{Cancellation: c.Record}); err != nil {
		return fmt.Errorf("adding the slip's cancellation to the book: %w", err)
	}
	return nil
}

// inBook reports whether an entry of the book at path is of kind with the
// fingerprint fp.
func inBook(path, kind, fp string) (bool, error) {
	errFound := errors.New("found")
	err := book.ReadFileEntries(path, func(e book.FileEntry) error {
		if e.Kind == kind && e.Fingerprint == fp {
			return errFound
		}
		return nil
	})
	if errors.Is(err, errFound) {
		return true, nil
	}
	return false, err
}

// RepairTornBook handles the one torn book the executor can explain: a kill in the middle of its own
// write of a receipt line. That write was never acknowledged (a call's answer goes out only after its
// line is durable), and the copy still shows the call as sent without a receipt, so the next step of the
// start writes that receipt again from the copy (see book.RepairTornLine). Any other torn book (no
// unfinished call in the copy, no copy, an unreadable copy, a book held by a running executor) is left
// as it is, and opening the book then stops with a message naming the line.
func RepairTornBook(set *settings.Settings, copyKey []byte, log *slog.Logger) error {
	explained := func() bool {
		_, unfinished, err := copylog.ReadUnfinished(set.Executor.Copy, copyKey, set.Name)
		return err == nil && len(unfinished) > 0
	}
	torn, err := book.RepairTornLine(set.Agent.Book, explained)
	if err != nil || torn == nil {
		return err
	}
	log.Warn("the book's last line was torn by a stop in the middle of a write; it is kept aside and the receipt is written again from the copy",
		slog.String("book", set.Agent.Book), slog.Int("line", torn.Line), slog.String("keptAt", torn.KeptAt))
	return nil
}

// RepairTornCopy sets aside the copy's torn last line (a kill in the middle of one of its writes,
// never acknowledged; see copylog.RepairTornLine) before the book's repair reads the copy.
func RepairTornCopy(set *settings.Settings, log *slog.Logger) error {
	torn, err := copylog.RepairTornLine(set.Executor.Copy)
	if err != nil || torn == nil {
		return err
	}
	log.Warn("the copy's last line was torn by a stop in the middle of a write, never acknowledged; it is kept aside",
		slog.String("copy", set.Executor.Copy), slog.Int("line", torn.Line), slog.String("keptAt", torn.KeptAt))
	return nil
}
