package book

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/seed-6e06167c/mcp-executor/internal/groupcommit"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// Book is an open book file: read and verified once, then appended to.
// Every append writes whole canonical lines, each ending with a line feed,
// in one write followed by one fdatasync for all the lines waiting at
// that moment (group commit), made by one of their appenders. A failed
// write is cut back to the size the file had, and from then on the book
// refuses every append and its ledger refuses every action, saying why.
type Book struct {
	path   string
	f      *os.File
	ledger *Ledger

	wmu    sync.Mutex // guards what follows, and w's queue
	w      *groupcommit.Writer[[]byte]
	size   int64 // bytes durable in the file; changed by w's rounds alone, under wmu
	needLF bool  // the last line read had no line feed; the same

	// syncFile makes the appended bytes durable (syncData); tests replace
	// it to hold a writer in its sync or to make the sync fail.
	syncFile func() error

	trust string // trustOf the options it was opened with
	cpUse string // what OpenBook made of the checkpoint (CheckpointUse)

	// sealGate is held shared by every append while it reads and queues its
	// lines, and whole by Seal while a seal is built: no line enters the
	// book between the seal's point and the seal's own line.
	sealGate sync.RWMutex
}

// Line is one entry of a book: exactly one of Slip, Stub, Refusal,
// Cancellation, Acknowledgement and Pass; a stub may carry its
// countersignature and the person's approval on the same line.
type Line struct {
	Slip             *record.Record
	Stub             *record.Record
	Countersignature *record.Record
	Approval         *record.Record
	Refusal          *record.Record
	Cancellation     *record.Record
	Acknowledgement  *record.Record
	Pass             *record.Record
}

// Bytes is the line's canonical text, without its line feed.
func (l Line) Bytes() ([]byte, error) {
	m := map[string]any{}
	main := 0
	for name, r := range map[string]*record.Record{"slip": l.Slip, "stub": l.Stub, "refusal": l.Refusal, "cancellation": l.Cancellation, "acknowledgement": l.Acknowledgement, "pass": l.Pass} {
		if r != nil {
			m[name] = r.Value()
			main++
		}
	}
	if main != 1 {
		return nil, errors.New("a book line holds exactly one of slip, stub, refusal, cancellation, acknowledgement and pass")
	}
	if l.Countersignature != nil || l.Approval != nil {
		if l.Stub == nil {
			return nil, errors.New("only a stub line carries a countersignature or an approval")
		}
		if l.Countersignature != nil {
			m["countersignature"] = l.Countersignature.Value()
		}
		if l.Approval != nil {
			m["approval"] = l.Approval.Value()
		}
	}
	b, err := canon.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("writing a book line: %w", err)
	}
	return b, nil
}

// OpenBook opens the book at path, creating it if it is missing, reads and
// verifies every line once, and keeps the file open for appending under an
// exclusive lock. A last line without a line feed that does not parse is
// torn (a write that never finished): OpenBook then stops with an error
// naming the line, and changes nothing. A book that holds problems opens;
// its ledger refuses every action and Ledger().Sound() names the first.
func OpenBook(path string, opts Options) (*Book, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening book %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close() // nothing written yet; the lock error is the one to report
		return nil, fmt.Errorf("locking book %s (is another executor using it?): %w", path, err)
	}
	b := &Book{path: path, f: f, trust: trustOf(opts)}
	b.syncFile = b.syncData
	b.w = groupcommit.New(&b.wmu, b.round)
	r, err := b.readAll(opts)
	if err != nil {
		_ = f.Close() // only read so far; the read error is the one to report
		return nil, err
	}
	b.ledger = newLedger(r)
	return b, nil
}

// readAll reads the whole book. The hybrid signatures are checked on every
// core while the lines are read in order, taking each as valid; if any
// turns out not to check, which only a damaged book shows, the book is read
// again from the start, checking each signature in its turn, so that the
// answer is always the one a reading in order gives. With a checkpoint
// that fits, the signatures of the lines it covers are not checked again;
// one that does not fit is ignored (CheckpointUse says why) and the book
// is read again from the start, checking every signature.
func (b *Book) readAll(opts Options) (*reader, error) {
	cp := opts.Checkpoint
	if cp != nil && cp.Trust != b.trust {
		b.cpUse = "ignored: it was made under other trusted passkeys"
		cp = nil
	}
	r, failed, cpErr, err := b.readParallel(opts, cp)
	if err == nil && cpErr != nil {
		b.cpUse = "ignored: " + cpErr.Error()
		if err = b.rewind(); err == nil {
			r, failed, _, err = b.readParallel(opts, nil)
		}
	} else if err == nil && cp != nil {
		b.cpUse = "used"
	}
	if err == nil && failed {
		if err = b.rewind(); err == nil {
			r = newReader(opts, false)
			err = b.read(r, 0, nil)
		}
	}
	if err != nil {
		return nil, err
	}
	r.verify = verifyWithKey
	return r, nil
}

func (b *Book) rewind() error {
	if _, err := b.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("reading book %s again: %w", b.path, err)
	}
	b.size, b.needLF = 0, false
	return nil
}

// readParallel reads the book once, checking signatures on every core
// (those of the lines cp covers not at all). failed is whether a signature
// did not check; cpErr says why cp does not fit the book.
func (b *Book) readParallel(opts Options, cp *Checkpoint) (r *reader, failed bool, cpErr, err error) {
	pool := newVerifyPool()
	r = newReader(opts, false)
	// The lines cp covers never get here: r.covered takes their
	// signatures as checked (keySetSignatures), confirmed by cp's root below.
	r.verify = pool.verify
	var after func() error
	if cp != nil {
		r.covered = cp.Entries > 0
		after = func() error {
			r.covered = cp != nil && r.size < cp.Entries
			if cp == nil || r.size != cp.Entries {
				return nil
			}
			root := r.tree.root()
			if canon.B64(root[:]) != cp.Root || b.size != cp.Bytes {
				return errCheckpointMismatch
			}
			cp = nil // checked: the lines after it are verified
			r.covered = false
			return nil
		}
	}
	covered := 0
	if cp != nil {
		covered = cp.Entries
	}
	err = b.read(r, covered, after)
	allChecked := pool.wait()
	if errors.Is(err, errCheckpointMismatch) {
		return r, false, errors.New("the book's first entries do not have the top fingerprint it names (the book was changed, or cut back)"), nil
	}
	if err == nil && cp != nil {
		return r, false, fmt.Errorf("it names %d entries and the book holds %d", cp.Entries, r.size), nil
	}
	return r, !allChecked, nil, err
}

var errCheckpointMismatch = errors.New("checkpoint does not fit")

// read reads the book from where the file stands, calling after (when
// given) once each line is read; its error stops the reading. The lines
// are parsed on every core and read in order (parseLines); the
// signatures of the first covered lines are not decoded.
func (b *Book) read(r *reader, covered int, after func() error) error {
	n := 0
	kb := newKeyBoard()
	err := parseLines(b.f, covered, kb, r.opts, func(pl *parsedLine) error {
		n++
		switch {
		case pl.noLine:
			return nil
		case pl.ioErr != nil:
			return fmt.Errorf("reading book %s: %w", b.path, pl.ioErr)
		}
		b.size = pl.end
		if !pl.lf {
			// No line feed: a whole line only if it parses.
			if !isJSON(pl.line) {
				return fmt.Errorf("book %s: line %d is torn (it has no line feed and does not parse as a whole entry); "+
					"a write did not finish: keep a copy, then remove that last line to go on", b.path, n)
			}
			b.needLF = true
		}
		if r.size >= MaxEntries {
			f := Finding{"too-large", "the book holds more than 100,000 entries"}
			r.failure = &f
			return errStop
		}
		r.leaf, r.line = &pl.leaf, pl
		e, err := r.readValue(pl.line, pl.obj, pl.names, pl.err, false)
		r.line = nil
		if err != nil {
			return fmt.Errorf("reading book %s line %d: %w", b.path, n, err)
		}
		kb.publish(r, &e)
		if after != nil {
			if err := after(); err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

// Ledger is the book's check before acting.
func (b *Book) Ledger() *Ledger { return b.ledger }

// Path is the book's file.
func (b *Book) Path() string { return b.path }

// Append writes entries to the book, checking each as the checker reads
// it: a line that would bring a problem into the book is refused, and the
// lines after it in the same call are not written (those before it are).
// It returns when the lines are durable.
func (b *Book) Append(entries ...Line) error {
	lines := make([][]byte, 0, len(entries))
	for _, e := range entries {
		line, err := e.Bytes()
		if err != nil {
			return err
		}
		lines = append(lines, line)
	}
	return b.appendLines(lines, nil, nil, false)
}

// AppendLine writes one canonical line (without its line feed).
func (b *Book) AppendLine(line []byte) error { return b.appendLines([][]byte{line}, nil, nil, false) }

// AppendStub writes the stub of a reserved call and commits the
// reservation: from then on the stub itself is counted, in the same step.
// It must be the reservation's turn (Reservation.Position returned), and
// the stub must be under the reserved slip. A stub that is refused leaves
// the reservation in flight; release it.
func (b *Book) AppendStub(r *Reservation, stub Line) error {
	if stub.Stub == nil {
		return errors.New("AppendStub takes a stub line")
	}
	if err := b.readyFor(r); err != nil {
		return err
	}
	line, err := stub.Bytes()
	if err != nil {
		return err
	}
	return b.appendLines([][]byte{line}, r, nil, false)
}

// appendLines checks and writes lines; signed, when given, is the value of
// the one line AppendSigned made (read as it is, not parsed from the text).
// With noBreaches a line that would show a breach is refused as well.
func (b *Book) appendLines(lines [][]byte, res *Reservation, signed map[string]any, noBreaches bool) error {
	l := b.ledger
	// The leaf hashes are worked out before the lock is taken.
	leaves := make([][32]byte, len(lines))
	for i, line := range lines {
		if len(line) <= MaxLineBytes {
			leaves[i] = leafHash(line)
		}
	}
	var waits []*groupcommit.Ticket[[]byte]
	err := func() error {
		b.sealGate.RLock()
		defer b.sealGate.RUnlock()
		l.mu.Lock()
		defer l.mu.Unlock()
		if err := l.brokenErr(); err != nil {
			return err
		}
		for i, line := range lines {
			if l.r.size+1 > MaxEntries {
				return fmt.Errorf("appending to book %s: the book is full (100,000 entries)", b.path)
			}
			if len(line) > MaxLineBytes {
				return fmt.Errorf("appending to book %s: the line is longer than 131,072 bytes", b.path)
			}
			if res != nil {
				if res.done {
					return errors.New("the reservation was already committed or released")
				}
				l.r.expectSlip, l.r.expectPass = res.slip, res.pass
			}
			l.r.leaf, l.r.refuseBreaches = &leaves[i], noBreaches
			var err error
			if signed != nil {
				_, err = l.r.readSigned(line, signed, true)
			} else {
				_, err = l.r.readLine(line, true)
			}
			l.r.expectSlip, l.r.expectPass, l.r.leaf, l.r.refuseBreaches = "", "", nil, false
			if err != nil {
				return fmt.Errorf("appending line %d of %d to book %s: %w", i+1, len(lines), b.path, err)
			}
			if res != nil {
				l.endLocked(res)
			}
			waits = append(waits, b.enqueue(line))
		}
		return nil
	}()
	for _, w := range waits {
		if werr := b.w.Await(w); werr != nil && err == nil {
			err = werr
		}
	}
	return err
}

// enqueue hands one line to the writer; the caller holds the ledger's
// lock, so lines are written in the order they were read. The caller then
// awaits the line, after letting the lock go.
func (b *Book) enqueue(line []byte) *groupcommit.Ticket[[]byte] {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	return b.w.Enqueue(append(line, '\n'))
}

// round writes every line waiting with one write and one fdatasync
// (groupcommit.Round): the lines as they are, none copied, one write(2)
// of a single line, one writev(2) of several. Only a round changes size
// and needLF, so it reads them without the lock. A failed round breaks
// the book and its ledger.
func (b *Book) round(batch [][]byte) ([]error, func(), error) {
	bufs := make([][]byte, 0, len(batch)+1)
	n := int64(0)
	if b.needLF {
		bufs = append(bufs, []byte{'\n'})
		n++
	}
	for _, line := range batch {
		bufs = append(bufs, line)
		n += int64(len(line))
	}
	if err := b.writeDurable(bufs); err != nil {
		return nil, func() { b.ledger.broken.Store(&err) }, err
	}
	return nil, func() { b.size, b.needLF = b.size+n, false }, nil
}

func (b *Book) writeDurable(bufs [][]byte) error {
	err := b.writeAll(bufs)
	if err == nil {
		err = b.syncFile()
	}
	if err == nil {
		return nil
	}
	werr := fmt.Errorf("writing to book %s failed; the book refuses every further append: %w", b.path, err)
	if terr := b.f.Truncate(b.size); terr != nil {
		return fmt.Errorf("%w; cutting the book back to %d bytes also failed: %w", werr, b.size, terr)
	}
	if serr := b.syncFile(); serr != nil {
		return fmt.Errorf("%w; syncing after cutting back also failed: %w", werr, serr)
	}
	return werr
}

// writeAll writes bufs one after the other at the file's end: one buffer
// with os.File.Write, several with writev(2), as many times as it takes
// (a write may take fewer bytes than it was given), at most maxIovecs
// buffers a call.
func (b *Book) writeAll(bufs [][]byte) error {
	if len(bufs) == 1 {
		n, err := b.f.Write(bufs[0])
		if err == nil && n != len(bufs[0]) {
			err = io.ErrShortWrite
		}
		return err
	}
	raw, err := b.f.SyscallConn()
	if err != nil {
		return err
	}
	var werr error
	if err := raw.Write(func(fd uintptr) bool {
		werr = writevAll(int(fd), bufs)
		return true
	}); err != nil {
		return err
	}
	return werr
}

// maxIovecs is the most buffers one writev(2) takes here (IOV_MAX is 1024).
const maxIovecs = 1024

// writevAll writes every byte of bufs to fd with writev(2), again after a
// partial write or an interrupted call. It changes the slices of bufs.
func writevAll(fd int, bufs [][]byte) error {
	for bufs = written(bufs, 0); len(bufs) > 0; {
		n, err := unix.Writev(fd, bufs[:min(len(bufs), maxIovecs)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return io.ErrShortWrite
		}
		bufs = written(bufs, n)
	}
	return nil
}

// written is what is left of bufs to write once n of their bytes are
// written: the buffers not yet written in full, the first one cut, and
// none empty.
func written(bufs [][]byte, n int) [][]byte {
	for len(bufs) > 0 && (n > 0 || len(bufs[0]) == 0) {
		if n < len(bufs[0]) {
			bufs[0] = bufs[0][n:]
			break
		}
		n -= len(bufs[0])
		bufs = bufs[1:]
	}
	return bufs
}

// syncData makes the file's appended bytes durable: fdatasync(2), which
// writes the data and the size that reaching it needs, but not the times
// (an append needs nothing more; see the copy, which does the same).
func (b *Book) syncData() error {
	for {
		err := unix.Fdatasync(int(b.f.Fd()))
		if err != unix.EINTR {
			return err
		}
	}
}

// Close waits for nothing: callers finish their appends first. It releases
// the lock and closes the file.
func (b *Book) Close() error {
	if err := b.f.Close(); err != nil {
		return fmt.Errorf("closing book %s: %w", b.path, err)
	}
	return nil
}
