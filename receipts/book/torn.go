package book

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"syscall"

	"github.com/seed-6e06167c/mcp-executor/internal/durable"
)

// TornLine is what RepairTornLine did: the torn last line's number and
// where its bytes are kept.
type TornLine struct {
	Line   int    // 1-based
	KeptAt string // BOOK.torn-<time>
}

// RepairTornLine handles the one torn book a writer can explain: a stop in
// the middle of its own write of a line, a write that was never
// acknowledged. When the book's last line has no line feed, does not parse
// as JSON, is no longer than MaxLineBytes (no longer than any line written
// here) and explained says the caller knows of such a write (the executor:
// its copy shows a call sent with no receipt, so the receipt is written
// again), the torn bytes are moved aside to BOOK.torn-<time> (kept as
// evidence) and the book is cut back to its last whole line.
//
// Any other book is left as it is, and so is a book another process holds
// locked; OpenBook then names a torn line. It returns nil when nothing was
// done. The file is read in pieces, never whole.
func RepairTornLine(path string, explained func() bool) (torn *TornLine, err error) {
	return RepairTornFile(path, "book", func(tail []byte) bool {
		// Whole but for its line feed, the book reads it; not explained,
		// opening the book reports the torn line.
		return !json.Valid(tail) && explained()
	})
}

// RepairTornFile is the repair for any file of lines this process alone
// appends to (the book; the executor's copy): when its last line has no
// line feed, is no longer than MaxLineBytes and cut says it may go, the
// bytes after the last line feed move to FILE.torn-<time> (kept, synced)
// and the file is cut back to its last whole line and synced. what names
// the file in errors. A file another process holds locked, a whole file
// and a tail cut refuses are left as they are (nil, nil).
func RepairTornFile(path, what string, cut func(tail []byte) bool) (torn *TornLine, err error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, path, err)
	}
	// Closing f also releases the lock taken below.
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			torn, err = nil, fmt.Errorf("%s %s: closing after the repair: %w", what, path, cerr)
		}
	}()
	// Never touch a file another process has open.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return nil, nil
	}
	at, tail, err := tornTail(f)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, path, err)
	}
	if tail == nil || !cut(tail) {
		return nil, nil
	}
	lines, err := linesBefore(f, at)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, path, err)
	}
	t := &TornLine{Line: lines + 1, KeptAt: fmt.Sprintf("%s.torn-%s", path, time.Now().UTC().Format("20060102T150405.000000000Z"))}
	if err := durable.WriteFile(t.KeptAt, tail); err != nil { // its folder synced too, before the cut
		return nil, fmt.Errorf("%s %s: keeping the torn line %d aside: %w", what, path, t.Line, err)
	}
	if err := f.Truncate(at); err != nil {
		return nil, fmt.Errorf("%s %s: cutting the torn line %d: %w", what, path, t.Line, err)
	}
	if err := f.Sync(); err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, path, err)
	}
	return t, nil
}

// tornTail reads the end of f and returns the offset just after its last
// line feed and the bytes after it: nil when the file is empty or ends
// with a line feed, or when they are more than MaxLineBytes (no line
// written here is that long). It reads at most MaxLineBytes+1 bytes, however
// long the file: a start next to a big book does not read it twice.
func tornTail(f *os.File) (cut int64, tail []byte, err error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, nil, err
	}
	size := fi.Size()
	from := max(0, size-(MaxLineBytes+1))
	end := make([]byte, size-from)
	if _, err := f.ReadAt(end, from); err != nil && !errors.Is(err, io.EOF) {
		return 0, nil, err
	}
	i := bytes.LastIndexByte(end, '\n')
	switch {
	case i == len(end)-1: // empty, or ends with a line feed
		return size, nil, nil
	case i < 0 && from > 0: // no line feed in the last MaxLineBytes+1 bytes
		return 0, nil, nil
	}
	cut = from + int64(i) + 1
	return cut, end[i+1:], nil
}

// linesBefore counts the line feeds in f's first n bytes, reading it in
// pieces: the number of the torn line, only counted when there is one.
func linesBefore(f *os.File, n int64) (int, error) {
	buf := make([]byte, 64<<10)
	lines := 0
	for at := int64(0); at < n; {
		k, err := f.ReadAt(buf[:min(int64(len(buf)), n-at)], at)
		lines += bytes.Count(buf[:k], []byte{'\n'})
		at += int64(k)
		if err != nil && !(errors.Is(err, io.EOF) && at == n) {
			return 0, err
		}
	}
	return lines, nil
}
