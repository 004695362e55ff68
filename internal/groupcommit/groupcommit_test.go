package groupcommit

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
)

// file is a made-up file the rounds write to: the batches in order, a
// round it can hold open, and errors it gives.
type file struct {
	mu      sync.Mutex // the owner's lock, the writer's too
	w       *Writer[string]
	batches [][]string // guarded by mu (apply writes it)
	// With hold set, the first round tells held it has begun and waits
	// on hold.
	hold, held chan struct{}
	rounds     int
	fatal      error
	bad        string // an item whose own error is "bad"
}

func newFile() *file {
	f := &file{}
	f.w = New(&f.mu, func(batch []string) ([]error, func(), error) {
		f.rounds++ // one round at a time: the writer's own state
		if f.hold != nil && f.rounds == 1 {
			f.held <- struct{}{}
			<-f.hold
		}
		if f.fatal != nil {
			return nil, nil, f.fatal
		}
		var errs []error
		for i, it := range batch {
			if it == f.bad {
				errs = make([]error, len(batch))
				errs[i] = errors.New("bad")
			}
		}
		b := slices.Clone(batch)
		return errs, func() { f.batches = append(f.batches, b) }, nil
	})
	return f
}

func (f *file) add(item string) error {
	f.mu.Lock()
	t := f.w.Enqueue(item)
	f.mu.Unlock()
	return f.w.Await(t)
}

// TestOneRoundEachWhenIdle: an appender that finds the writer idle writes
// its item at once, in a round of its own.
func TestOneRoundEachWhenIdle(t *testing.T) {
	f := newFile()
	for _, it := range []string{"a", "b", "c"} {
		if err := f.add(it); err != nil {
			t.Fatal(err)
		}
	}
	if want := [][]string{{"a"}, {"b"}, {"c"}}; !slices.EqualFunc(f.batches, want, slices.Equal) {
		t.Fatalf("rounds %v, want %v", f.batches, want)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.w.Busy() || f.w.Err() != nil {
		t.Fatal("the writer is busy or broken after its rounds")
	}
}

// TestItemsWaitingShareARound: while a round is held, seven more items are
// queued; they are written together in the next round, in the order they
// came, by one of their own appenders, and each is told its own outcome.
func TestItemsWaitingShareARound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFile()
		f.hold, f.held = make(chan struct{}), make(chan struct{})
		f.bad = "w3"
		errs := make(chan error, 8)
		go func() { errs <- f.add("first") }()
		<-f.held // the first round is being written
		for i := range 7 {
			go func() { errs <- f.add(fmt.Sprintf("w%d", i)) }()
			synctest.Wait() // queued in this order
		}
		f.mu.Lock()
		if !f.w.Busy() {
			t.Error("not busy while a round is held")
		}
		f.mu.Unlock()
		f.hold <- struct{}{}
		var bad int
		for range 8 {
			if err := <-errs; err != nil {
				bad++
			}
		}
		want := [][]string{{"first"}, {"w0", "w1", "w2", "w3", "w4", "w5", "w6"}}
		if !slices.EqualFunc(f.batches, want, slices.Equal) || bad != 1 {
			t.Fatalf("rounds %v (%d failed), want %v and only w3 failed", f.batches, bad, want)
		}
	})
}

// TestFatalFailsEveryoneWaiting: a round that fails breaks the writer:
// its items, those waiting and every later one fail with its error, none
// waits for good, and the writer is idle.
func TestFatalFailsEveryoneWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFile()
		f.hold, f.held = make(chan struct{}), make(chan struct{})
		disk := errors.New("disk gone")
		errs := make(chan error, 8)
		go func() { errs <- f.add("first") }()
		<-f.held
		for i := range 7 {
			go func() { errs <- f.add(fmt.Sprint(i)) }()
		}
		synctest.Wait()
		f.fatal = disk
		f.hold <- struct{}{}
		for range 8 {
			if err := <-errs; !errors.Is(err, disk) {
				t.Fatalf("an item waiting was told %v, want the round's error", err)
			}
		}
		if err := f.add("later"); !errors.Is(err, disk) {
			t.Fatalf("an item after the failure: %v", err)
		}
		f.mu.Lock()
		f.w.WaitIdle()
		if f.w.Busy() || !errors.Is(f.w.Err(), disk) || len(f.batches) != 0 {
			t.Fatalf("after the failure: busy %v, err %v, rounds %v", f.w.Busy(), f.w.Err(), f.batches)
		}
		f.mu.Unlock()
	})
}

// TestWaitIdle: WaitIdle returns only once the round being written is
// over.
func TestWaitIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFile()
		f.hold, f.held = make(chan struct{}), make(chan struct{})
		done := make(chan error, 1)
		go func() { done <- f.add("a") }()
		<-f.held
		idle := make(chan struct{})
		go func() {
			f.mu.Lock()
			f.w.WaitIdle()
			f.mu.Unlock()
			close(idle)
		}()
		synctest.Wait()
		select {
		case <-idle:
			t.Fatal("WaitIdle returned while a round was held")
		default:
		}
		f.hold <- struct{}{}
		<-idle
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}
