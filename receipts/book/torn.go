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
	at, lines, tail, err := tornTail(f)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, path, err)
	}
	if tail == nil || !cut(tail) {
		return nil, nil
	}
	t := &TornLine{Line: lines + 1, KeptAt: fmt.Sprintf("%s.torn-%s", path, time.Now().UTC().Format("20060102T150405.000000000Z"))}
	if err := writeDurable(t.KeptAt, tail); err != nil {
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

// tornTail reads f in pieces and returns the offset just after its last
// line feed, the number of line feeds, and the bytes after the last one:
// nil when the file is empty or ends with a line feed, or when they are
// more than MaxLineBytes (no line written here is that long).
func tornTail(f *os.File) (cut int64, lines int, tail []byte, err error) {
	buf := make([]byte, 64<<10)
	var at int64
	for {
		n, rerr := f.ReadAt(buf, at)
		chunk := buf[:n]
		lines += bytes.Count(chunk, []byte{'\n'})
		if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
			cut = at + int64(i) + 1
		}
		at += int64(n)
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return 0, 0, nil, rerr
		}
	}
	size := at - cut
	if size == 0 || size > MaxLineBytes {
		return cut, lines, nil, nil
	}
	tail = make([]byte, size)
	if _, err := f.ReadAt(tail, cut); err != nil {
		return 0, 0, nil, err
	}
	return cut, lines, tail, nil
}

// writeDurable writes data to a new file (0600) and syncs it.
func writeDurable(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return errors.Join(err, f.Close())
	}
	if err := f.Sync(); err != nil {
		return errors.Join(err, f.Close())
	}
	return f.Close()
}
