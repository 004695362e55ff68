package sidecar

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/seed-6e06167c/mcp-executor/copylog"
)

// repairTornBook handles the one torn book the executor can explain: a kill in the middle of its own
// write of a receipt line. That write was never acknowledged (a call's answer goes out only after its
// line is durable), and the copy still shows the call as sent without a receipt, so the next step of the
// start writes that receipt again from the copy. Here the torn bytes are moved aside to
// BOOK.torn-<time> (kept as evidence), and the book is cut back to its last whole line.
//
// Any other torn book (no unfinished call in the copy, no copy, an unreadable copy, a book held by a
// running executor) is left as it is, and opening the book then stops with a message naming the line.
func repairTornBook(bookPath, copyPath string, copyKey []byte, name string, log *slog.Logger) error {
	f, err := os.OpenFile(bookPath, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("book %s: %w", bookPath, err)
	}
	defer f.Close()
	// Never touch a book another executor has open.
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return nil
	}
	defer unix.Flock(int(f.Fd()), unix.LOCK_UN)
	data, err := os.ReadFile(bookPath)
	if err != nil {
		return fmt.Errorf("book %s: %w", bookPath, err)
	}
	if len(data) == 0 || data[len(data)-1] == '\n' {
		return nil
	}
	cut := bytes.LastIndexByte(data, '\n') + 1
	if json.Valid(data[cut:]) {
		return nil // a whole last line without its line feed: the book reads it
	}
	lines, err := copylog.ReadFile(copyPath, copyKey, name)
	if err != nil || len(copylog.UnfinishedCalls(lines)) == 0 {
		return nil // not explained by the copy: opening the book reports the torn line
	}
	lineNo := bytes.Count(data[:cut], []byte{'\n'}) + 1
	aside := fmt.Sprintf("%s.torn-%s", bookPath, time.Now().UTC().Format("20060102T150405.000000000Z"))
	if err := writeDurable(aside, data[cut:]); err != nil {
		return fmt.Errorf("book %s: keeping the torn line %d aside: %w", bookPath, lineNo, err)
	}
	if err := f.Truncate(int64(cut)); err != nil {
		return fmt.Errorf("book %s: cutting the torn line %d: %w", bookPath, lineNo, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("book %s: %w", bookPath, err)
	}
	log.Warn("the book's last line was torn by a stop in the middle of a write; it is kept aside and the receipt is written again from the copy",
		slog.String("book", bookPath), slog.Int("line", lineNo), slog.String("keptAt", aside))
	return nil
}

// writeDurable writes data to a new file (0600) and syncs it.
func writeDurable(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
