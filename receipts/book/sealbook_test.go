package book

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/internal/tsatest"
	"github.com/seed-6e06167c/mcp-executor/receipts/seal"
)

// Book.Seal puts the seal exactly after the entries it covers: a stub
// appended while the seal is built waits, and lands after the seal's line.
// The book then checks intact, its stamp counted.
func TestBookSeal(t *testing.T) {
	f := newFixture(t, nil)
	path := filepath.Join(t.TempDir(), "book.jsonl")
	tsa, _ := tsatest.New(bytes.Repeat([]byte{0x0c}, 32))
	opts := f.opts
	opts.StampServices = []string{tsa.Fingerprint}
	b, err := OpenBook(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, ok := b.LastSeal(); ok {
		t.Fatal("a new book has a last seal")
	}
	if err := b.Append(f.slipLine()); err != nil {
		t.Fatal(err)
	}
	when := f.start.Add(time.Hour)
	first := f.line(t, Position{}, Proposal{Action: "tool.a", With: "executor", When: when})
	if err := b.Append(first); err != nil {
		t.Fatal(err)
	}
	recorder, err := seal.NewLocalSigner(bytes.Repeat([]byte{0x31}, 32), bytes.Repeat([]byte{0x32}, 32), bytes.Repeat([]byte{0x33}, 96))
	if err != nil {
		t.Fatal(err)
	}
	second := f.line(t, Position{Seq: 1, Previous: first.Stub.Fingerprint}, Proposal{Action: "tool.a", With: "executor", When: when.Add(time.Second)})

	building := make(chan struct{})
	var wg sync.WaitGroup
	var appendErr error
	var appendedAt time.Time
	err = b.Seal(context.Background(), func(ctx context.Context, at SealPoint) ([]byte, error) {
		if at.Size != 2 || at.Previous != "" || at.Tree.Size != 2 {
			t.Errorf("the point: %+v", at)
		}
		// A stub arrives while the seal is built: it must wait.
		wg.Go(func() {
			close(building)
			appendErr = b.Append(second)
			appendedAt = time.Now()
		})
		<-building
		time.Sleep(50 * time.Millisecond)
		if b.Ledger().Size() != 2 {
			t.Errorf("a line entered the book while the seal was built")
		}
		p, err := seal.Prepare(seal.Fields{Name: "recorder", Keys: recorder.Keys(), Size: at.Size, Root: at.Root, Previous: at.Previous, When: when.Add(2 * time.Second)})
		if err != nil {
			return nil, err
		}
		s, err := p.Sign(ctx, recorder)
		if err != nil {
			return nil, err
		}
		return s.Line([][]byte{tsa.Token(p.Stamped(), when.Add(2*time.Second), tsatest.Options{})})
	})
	sealedAt := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if appendErr != nil {
		t.Fatal(appendErr)
	}
	if appendedAt.Before(sealedAt.Add(-time.Second)) {
		t.Fatal("the stub was appended before the seal")
	}
	last, ok := b.LastSeal()
	if !ok || last.Index != 2 || !last.When.Equal(when.Add(2*time.Second)) {
		t.Fatalf("last seal %+v %v", last, ok)
	}
	if p := b.Point(); p.Size != 4 || p.Previous != last.Fingerprint || p.Sealed == nil || p.Sealed.Entries != 2 {
		t.Fatalf("point after: %+v", p)
	}
	res := CheckBook(readFile(t, path), opts)
	if !res.Summary.Intact || res.Entries[2].Kind != KindSeal || res.Entries[3].Kind != KindStub {
		t.Fatalf("the book: %+v %v", res.Summary, problemCodes(res))
	}

	// A seal that does not fit the point is refused, and nothing is written.
	old := []byte(bookLines(string(readFile(t, path)))[2])
	err = b.Seal(context.Background(), func(ctx context.Context, at SealPoint) ([]byte, error) { return old, nil })
	if err == nil || b.Ledger().Size() != 4 {
		t.Fatalf("a seal that does not fit: %v, size %d", err, b.Ledger().Size())
	}
	// A build that gives nothing appends nothing.
	if err := b.Seal(context.Background(), func(context.Context, SealPoint) ([]byte, error) { return nil, nil }); !errors.Is(err, ErrSealAbandoned) {
		t.Fatalf("an abandoned seal: %v", err)
	}

	// Opened again, the book knows its last seal.
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := OpenBook(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if l2, ok := again.LastSeal(); !ok || l2 != last {
		t.Fatalf("after opening again: %+v", l2)
	}
	if err := again.Ledger().Sound(); err != nil {
		t.Fatalf("the ledger of a sealed book: %v", err)
	}
}
