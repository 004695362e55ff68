package book

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/seed-6e06167c/mcp-executor/internal/groupcommit"
	mtree "github.com/seed-6e06167c/mcp-executor/receipts/tree"
)

// SealPoint is the book as a seal made now must state it: the entries
// before the seal's line, their tree, and the seal before it.
type SealPoint struct {
	// Size and Root are what the seal states: the number of entries before
	// its line and their top fingerprint.
	Size int
	Root mtree.Hash
	// Tree is the tree's state at that point, for a caller that keeps its
	// own builder.
	Tree mtree.State
	// Previous is the fingerprint of the last seal in the book, "" for none.
	Previous string
	// LastSealWhen is that seal's stated time (zero for none); a seal may
	// not be dated before it.
	LastSealWhen time.Time
	// Latest is the latest time a sound entry states (zero for none); a
	// seal dated more than 300 s before it is refused.
	Latest time.Time
	// Sealed is how far the last counted time-stamp reaches, as the book
	// was opened with its StampServices; nil for none.
	Sealed *Sealed
}

// Point returns the book's SealPoint as it stands: what a seal appended now
// would state. Lines may be appended after it; Seal holds them off.
func (b *Book) Point() SealPoint {
	b.ledger.mu.Lock()
	defer b.ledger.mu.Unlock()
	return b.ledger.r.point()
}

func (r *reader) point() SealPoint {
	p := SealPoint{Size: r.size, Root: r.tree.root(), Tree: r.tree.state(), Previous: r.seals.last}
	if r.seals.lastWhen != minTime {
		p.LastSealWhen = time.UnixMilli(r.seals.lastWhen).UTC()
	}
	if r.seals.latest != minTime {
		p.Latest = time.UnixMilli(r.seals.latest).UTC()
	}
	if r.seals.sealed != nil {
		s := *r.seals.sealed
		p.Sealed = &s
	}
	return p
}

// ErrSealAbandoned is wrapped by Seal when build gives no line.
var ErrSealAbandoned = errors.New("the seal was not made")

// Seal appends a seal as the book's next line. It holds every other append
// off (they wait, in their order, and go on after the seal's line), takes
// the book's point, and calls build with it; build returns the seal line
// for exactly that point (receipts/seal: Prepare, Sign, Line). The line is
// read as the checker reads it (a seal that does not fit is refused and
// nothing is written), written and made durable. Calls that are only
// checked (CheckBefore, Reserve) are not held.
//
// build runs while appends wait: it should take about as long as a seal's
// signatures (about 0.65 s of one core for SLH-DSA), asking time-stamp
// services at the same time and writing the seal with the stamps that
// came by then. A build that returns a nil line, or an error, appends
// nothing: the error is returned wrapped (ErrSealAbandoned for a nil line).
// build must not append to this book itself (that append would wait for
// the seal, which waits for build); Point and the ledger's checks may be
// asked.
func (b *Book) Seal(ctx context.Context, build func(ctx context.Context, at SealPoint) ([]byte, error)) error {
	var wait *groupcommit.Ticket[[]byte]
	err := func() error {
		b.sealGate.Lock()
		defer b.sealGate.Unlock()
		l := b.ledger
		l.mu.Lock()
		if err := l.brokenErr(); err != nil {
			l.mu.Unlock()
			return err
		}
		at := l.r.point()
		l.mu.Unlock()
		line, err := build(ctx, at)
		if err != nil {
			return fmt.Errorf("sealing book %s: %w", b.path, err)
		}
		if line == nil {
			return fmt.Errorf("sealing book %s: %w", b.path, ErrSealAbandoned)
		}
		if len(line) > MaxLineBytes {
			return fmt.Errorf("sealing book %s: the seal line is longer than 131,072 bytes", b.path)
		}
		leaf := leafHash(line)
		l.mu.Lock()
		defer l.mu.Unlock()
		if err := l.brokenErr(); err != nil {
			return err
		}
		if l.r.size+1 > MaxEntries {
			return fmt.Errorf("sealing book %s: the book is full (100,000 entries)", b.path)
		}
		l.r.leaf = &leaf
		e, err := l.r.readLine(line, true)
		l.r.leaf = nil
		if err != nil {
			return fmt.Errorf("sealing book %s: %w", b.path, err)
		}
		if e.Kind != KindSeal {
			return fmt.Errorf("sealing book %s: the line built is a %s, not a seal", b.path, e.Kind)
		}
		wait = b.enqueue(line)
		return nil
	}()
	if err != nil {
		return err
	}
	return b.w.Await(wait)
}

// LastSeal is the last seal of the book and what it states; ok is false
// when the book holds none.
type LastSeal struct {
	Fingerprint string
	Index       int // the seal's entry, from 0
	When        time.Time
}

// LastSeal returns the book's last seal.
func (b *Book) LastSeal() (LastSeal, bool) {
	b.ledger.mu.Lock()
	defer b.ledger.mu.Unlock()
	s := b.ledger.r.seals
	if s.last == "" {
		return LastSeal{}, false
	}
	return LastSeal{Fingerprint: s.last, Index: s.lastIndex, When: time.UnixMilli(s.lastWhen).UTC()}, true
}
