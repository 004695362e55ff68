package copylog

import (
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/seed-6e06167c/mcp-executor/internal/durable"
	"github.com/seed-6e06167c/mcp-executor/internal/groupcommit"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"

	"golang.org/x/sys/unix"
)

// Log is an open copy, held under an exclusive lock until Close. It is safe
// for concurrent use.
type Log struct {
	path       string
	key        []byte
	name       string
	f          *os.File
	approvals  []Line // the approval lines read at Open
	unfinished []Unfinished

	// writeFile and syncFile are the two calls that put bytes on the disk;
	// tests replace them to make a write fail in ways a real disk rarely
	// does on demand.
	writeFile func(b []byte) (int, error)
	syncFile  func() error

	mu      sync.Mutex // guards what follows, and w's queue
	w       *groupcommit.Writer[*request]
	nextSeq int64 // changed by w's rounds alone, under mu
	size    int64 // the same
	closed  bool
	// unsynced is set while lines written by AppendUnsynced wait for the
	// next sync (that of an Append, or Close's).
	unsynced bool
	// sum is the SHA-256 of every byte of the file, fed at Open and with
	// each write; unsettled holds the calls sent (or not written) whose
	// receipt is not yet in the copy. A checkpoint is saved only while
	// unsettled is empty.
	sum       hash.Hash
	unsettled map[string]struct{}
	cpUse     string
}

// request is one Append call waiting for its lines to be written (and,
// unless noSync, durable).
type request struct {
	bodies []map[string]any
	calls  []callMark
	noSync bool
}

// callMark is what a written line changes in Log.unsettled.
type callMark struct {
	kind Kind
	call string
}

// Open opens the copy at path, creating it with mode 0600 if it is missing,
// takes an exclusive non-blocking flock on it, and verifies every line
// under key (32 bytes) for the executor called name. A copy another process
// or another Open holds fails at once with [ErrLocked]. A copy that does not
// verify fails as [Verify] says, and the file is left as it is. An existing
// copy that others may read or write is refused.
//
// Where the checkpoint the last [Log.SaveCheckpoint] left beside the copy
// fits (its tag checks and the bytes it covers are unchanged), the lines
// it covers are hashed, not parsed: only those of the approval kinds and
// of the kinds a [Visit] asks for are read. A checkpoint that does not fit
// is ignored and the whole copy is read ([Log.CheckpointUse] says which).
func Open(path string, key []byte, name string) (*Log, error) {
	return OpenWith(path, key, name, Visit{})
}

// Visit is what OpenWith hands lines to during its one read.
type Visit struct {
	// Kinds are the kinds of the lines Each is handed; none means every
	// kind (and then a checkpoint saves no parsing).
	Kinds []Kind
	// Each is handed each line of Kinds that checks, in order (nil for
	// none). An error from it ends the open with that error.
	Each func(Line) error
}

func (v Visit) wants(k Kind) bool {
	return v.Each != nil && (len(v.Kinds) == 0 || slices.Contains(v.Kinds, k))
}

// OpenWith is Open that also hands lines to v during the one read Open
// makes: a caller that needs something of the copy at start reads it
// once, not twice.
func OpenWith(path string, key []byte, name string, v Visit) (*Log, error) {
	if name == "" {
		return nil, errors.New("opening copy: no executor name given")
	}
	if len(key) == 0 {
		if fi, err := os.Stat(path); err == nil && fi.Size() > 0 {
			return nil, fmt.Errorf("opening copy %s: it holds lines but no copy key was given: %w", path, ErrKeyMissing)
		}
		return nil, fmt.Errorf("opening copy %s: no copy key given: %w", path, ErrKeyMissing)
	}
	if len(key) != KeySize {
		return nil, fmt.Errorf("opening copy %s: the copy key is %d bytes, not %d", path, len(key), KeySize)
	}
	_, statErr := os.Stat(path)
	created := errors.Is(statErr, os.ErrNotExist)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening copy %s: %w", path, err)
	}
	l, err := open(f, path, key, name, created, v)
	if err != nil {
		_ = f.Close() // open wrote nothing to f; its error is the one to report
		return nil, err
	}
	return l, nil
}

func open(f *os.File, path string, key []byte, name string, created bool, v Visit) (*Log, error) {
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("opening copy %s: another executor holds it (flock): %w", path, ErrLocked)
		}
		return nil, fmt.Errorf("locking copy %s: %w", path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("opening copy %s: %w", path, err)
	}
	if created {
		// The mode given to open is narrowed by the umask only; make it
		// exactly 0600.
		if err := f.Chmod(0o600); err != nil {
			return nil, fmt.Errorf("opening copy %s: %w", path, err)
		}
	} else if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("opening copy %s: others may read or write it (mode %04o); make it 0600", path, perm)
	}
	if created || fi.Size() == 0 {
		// Make the name durable before any line is written under it. An
		// empty copy that was there may be one an Open made and stopped
		// before syncing its folder.
		if err := syncDir(filepath.Dir(path)); err != nil {
			return nil, fmt.Errorf("opening copy %s: syncing its folder: %w", path, err)
		}
	}
	// Read line by line: what is kept is the calls still without a
	// receipt and the approval lines, never every line.
	var acc unfinishedAcc
	var approvals []Line
	visit := func(ln Line) error {
		if ln.Kind.isApproval() {
			approvals = append(approvals, ln)
		}
		if v.wants(ln.Kind) {
			return v.Each(ln)
		}
		return nil
	}
	kept := func(k Kind) bool { return k.isApproval() || v.wants(k) } // what visit takes
	from, cpUse, err := openFromCheckpoint(f, fi.Size(), path, key, name, kept, visit)
	if err != nil {
		return nil, err
	}
	n, size, err := verifyStreamFrom(f, from, key, name, path, func(ln Line) error {
		acc.add(ln)
		return visit(ln)
	})
	if err != nil {
		if strings.HasPrefix(cpUse, "ignored: ") {
			// What changed under the checkpoint is the same fault: say both.
			return nil, fmt.Errorf("%w (its checkpoint was %s)", err, cpUse)
		}
		return nil, err
	}
	l := &Log{
		path:       path,
		key:        append([]byte(nil), key...),
		name:       name,
		f:          f,
		approvals:  approvals,
		unfinished: acc.list(),
		nextSeq:    n + 1,
		size:       from.bytes + size,
		sum:        from.sum,
		unsettled:  acc.unsettled(),
		cpUse:      cpUse,
	}
	l.w = groupcommit.New(&l.mu, l.round)
	l.writeFile = f.Write
	l.syncFile = func() error { return unix.Fdatasync(int(f.Fd())) }
	return l, nil
}

// syncDir fsyncs a folder. Tests replace it to see which folders are
// synced: a sync cannot be observed.
var syncDir = durable.SyncDir

// Path is the copy's file path.
func (l *Log) Path() string { return l.path }

// ApprovalLines returns the approval lines verified at Open (not those
// appended since), in order: what approval.NewHub restores its requests
// from. The Log keeps no other line it read.
func (l *Log) ApprovalLines() []Line { return append([]Line(nil), l.approvals...) }

// Unfinished returns, as found at Open, the calls the copy shows as sent
// with no receipt or late-receipt line: the receipts the next start must
// write.
func (l *Log) Unfinished() []Unfinished { return append([]Unfinished(nil), l.unfinished...) }

// Err returns the error that broke the log (wrapping ErrUnwritable), or
// nil while it can still be written.
func (l *Log) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Err()
}

// Append writes lines to the copy, numbering them, naming the executor and
// tagging each, and returns once they are on the disk (written and
// fdatasync'd). Lines of concurrent calls are written together with one
// write and one fdatasync; the lines of one call are always adjacent and in
// order. A line whose kind or fields are wrong is refused before anything is
// written. If a write or the sync fails, or writes only part, the bytes are
// cut back off the file and the log is broken: this and every later Append
// fail with an error wrapping [ErrUnwritable]. After Close, Append fails with
// [ErrClosed].
func (l *Log) Append(lines ...Line) error { return l.appendLines(false, lines) }

// AppendUnsynced writes lines as Append does, in the same order with the
// lines of other calls, but returns once they are written, without
// waiting for an fdatasync of their own: they become durable with the
// next Append's sync (which syncs the whole file), or at Close. A stop of
// the process (kill -9) loses nothing written; a crash of the machine can
// lose the lines written since the last sync, none of which was
// acknowledged as durable. It is only for lines the next start rebuilds
// exactly when they are missing: the receipt line, whose content the book
// holds durably before it is written (see the package doc).
func (l *Log) AppendUnsynced(lines ...Line) error { return l.appendLines(true, lines) }

func (l *Log) appendLines(noSync bool, lines []Line) error {
	if len(lines) == 0 {
		return nil
	}
	now := time.Now()
	req := &request{bodies: make([]map[string]any, len(lines)), noSync: noSync}
	for i := range lines {
		ln := lines[i]
		if ln.When.IsZero() {
			ln.When = now
		}
		b, err := ln.body()
		if err != nil {
			return fmt.Errorf("copy line (%s): %w", ln.Kind, err)
		}
		req.bodies[i] = b
		switch ln.Kind {
		case KindSent, KindNotWritten, KindReceipt, KindLateReceipt:
			req.calls = append(req.calls, callMark{ln.Kind, ln.Call})
		}
	}

	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return fmt.Errorf("appending to copy %s: %w", l.path, ErrClosed)
	}
	t := l.w.Enqueue(req)
	l.mu.Unlock()
	return l.w.Await(t)
}

// round writes the lines of every request waiting (groupcommit.Round):
// numbered from the copy's next number, with one write, and one fdatasync
// unless none of them asks for it. Only a round changes nextSeq and size,
// so it reads them without the lock.
func (l *Log) round(group []*request) ([]error, func(), error) {
	seq, size := l.nextSeq, l.size
	buf, seqAfter, encErrs := l.encode(group, seq)
	synced := false
	for _, r := range group {
		synced = synced || !r.noSync
	}
	if err := l.writeLines(buf, size, synced); err != nil {
		return nil, nil, fmt.Errorf("writing copy %s: %w: %w", l.path, ErrUnwritable, err)
	}
	return encErrs, func() {
		l.nextSeq = seqAfter
		l.size += int64(len(buf))
		if len(buf) > 0 {
			l.unsynced = !synced
			l.sum.Write(buf)
		}
		for i, r := range group {
			if encErrs[i] == nil {
				l.settle(r.calls)
			}
		}
	}, nil
}

// settle notes what written lines change in the calls without a receipt.
func (l *Log) settle(calls []callMark) {
	for _, c := range calls {
		switch c.kind {
		case KindSent, KindNotWritten:
			l.unsettled[c.call] = struct{}{}
		case KindReceipt, KindLateReceipt:
			delete(l.unsettled, c.call)
		}
	}
}

// encode numbers, names and tags each request's lines, starting at seq. A
// request whose lines cannot be written gets its error and uses no number.
func (l *Log) encode(group []*request, seq int64) ([]byte, int64, []error) {
	var buf []byte
	errs := make([]error, len(group))
	for i, r := range group {
		start, startSeq := len(buf), seq
		for _, b := range r.bodies {
			line, err := l.tagLine(b, seq)
			if err != nil {
				buf, seq = buf[:start], startSeq
				errs[i] = fmt.Errorf("copy line: %w", err)
				break
			}
			buf = append(buf, line...)
			seq++
		}
	}
	return buf, seq, errs
}

// tagLine writes one line: body with seq and name, tagged, then LF.
func (l *Log) tagLine(body map[string]any, seq int64) ([]byte, error) {
	full := make(map[string]any, len(body)+3)
	for k, v := range body {
		full[k] = v
	}
	full["seq"] = seq
	full["name"] = l.name
	input, err := canon.Marshal(full)
	if err != nil {
		return nil, err
	}
	full["tag"] = canon.B64(sum(l.key, input))
	out, err := canon.Marshal(full)
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// writeLines writes buf at the end of the file and, when synced is set,
// syncs it. On any failure it cuts the file back to size.
func (l *Log) writeLines(buf []byte, size int64, synced bool) error {
	if len(buf) == 0 {
		return nil
	}
	n, err := l.writeFile(buf)
	if err == nil && n != len(buf) {
		err = fmt.Errorf("short write: %d of %d bytes: %w", n, len(buf), io.ErrShortWrite)
	}
	if err == nil && synced {
		err = l.syncFile()
	}
	if err != nil {
		if terr := l.f.Truncate(size); terr != nil {
			return fmt.Errorf("%w; cutting the copy back to %d bytes also failed: %w", err, size, terr)
		}
		_ = l.syncFile() // best effort: the log is broken either way
	}
	return err
}

// Close waits for a write in progress, releases the lock and closes the
// file. Later Appends fail with ErrClosed. Closing twice is harmless.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.w.WaitIdle()
	var serr error
	if l.unsynced && l.w.Err() == nil {
		if serr = l.syncFile(); serr != nil {
			serr = fmt.Errorf("syncing copy %s at close: %w", l.path, serr)
		}
		l.unsynced = false
	}
	l.mu.Unlock()
	// Closing the file releases the flock.
	if err := l.f.Close(); err != nil {
		return errors.Join(serr, fmt.Errorf("closing copy %s: %w", l.path, err))
	}
	return serr
}
