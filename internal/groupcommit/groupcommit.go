// Package groupcommit lets concurrent appenders of one file share its
// writes and syncs (group commit) without a writer goroutine: the first
// appender to find no write in progress writes every item waiting, in
// one round, and then hands the writing on to the appender of the first
// item that came while it wrote, which carries on. No goroutine is
// started and no hand-off is waited on for an item that finds the file
// idle. The book and the executor's copy both append this way.
package groupcommit

import "sync"

// Round writes one batch of items, in the order they were queued, and is
// called without the lock. It returns each item's error (nil, or one per
// item), or fatal: the writer is then broken, and every item of the batch,
// every item waiting and every later one fails with fatal. apply, when not
// nil, runs under the lock once the round is over, before anyone is told:
// the place to update what the lock guards.
type Round[T any] func(batch []T) (errs []error, apply func(), fatal error)

// Writer is the queue of one file's appends. Its lock is its owner's (the
// one that also guards the owner's state), so that an owner can check its
// own state and queue an item at once.
type Writer[T any] struct {
	mu      *sync.Mutex
	idle    sync.Cond
	round   Round[T]
	queue   []*Ticket[T]
	writing bool
	broken  error
}

// Ticket is one queued item, awaited by its appender.
type Ticket[T any] struct {
	item T
	lead bool // the appender writes: no write was in progress when it came
	done chan turn
}

// turn is what an appender waiting on its ticket is told: its item's
// outcome, or that it writes now (lead).
type turn struct {
	err  error
	lead bool
}

// New makes the writer of rounds under mu.
func New[T any](mu *sync.Mutex, round Round[T]) *Writer[T] {
	w := &Writer[T]{mu: mu, round: round}
	w.idle.L = mu
	return w
}

// Enqueue queues item, with the lock held (the order of Enqueue calls is
// the order items are written), and returns its ticket, which the caller
// awaits once it has let the lock go. On a broken writer the ticket fails
// at once.
func (w *Writer[T]) Enqueue(item T) *Ticket[T] {
	t := &Ticket[T]{item: item, done: make(chan turn, 1)}
	if w.broken != nil {
		t.done <- turn{err: w.broken}
		return t
	}
	w.queue = append(w.queue, t)
	if !w.writing {
		w.writing, t.lead = true, true
	}
	return t
}

// Await returns t's item's outcome, once its round is over, writing that
// round (and what waits with it) when it is t's appender's turn. Call it
// without the lock.
func (w *Writer[T]) Await(t *Ticket[T]) error {
	if !t.lead {
		r := <-t.done
		if !r.lead {
			return r.err
		}
	}
	w.write()
	return (<-t.done).err
}

// write runs one round: everything queued, which holds the writing
// appender's own item (it was queued, or at the head of the queue, when
// its turn came). It then hands the writing on to the first item queued
// meanwhile, or stops.
func (w *Writer[T]) write() {
	w.mu.Lock()
	batch := w.queue
	w.queue = nil
	items := make([]T, len(batch))
	for i, t := range batch {
		items[i] = t.item
	}
	w.mu.Unlock()

	errs, apply, fatal := w.round(items)

	w.mu.Lock()
	if apply != nil {
		apply()
	}
	var told []*Ticket[T]
	if fatal != nil {
		w.broken = fatal
		told = append(batch, w.queue...)
		w.queue = nil
	}
	// The writer stops before it tells anyone, when nothing more waits:
	// an appender whose item is done then finds the writer idle.
	var next *Ticket[T]
	if len(w.queue) == 0 {
		w.writing = false
		w.idle.Broadcast()
	} else {
		next = w.queue[0] // writing stays set: next's appender carries on
	}
	w.mu.Unlock()
	if fatal != nil {
		for _, t := range told {
			t.done <- turn{err: fatal}
		}
		return
	}
	for i, t := range batch {
		var err error
		if errs != nil {
			err = errs[i]
		}
		t.done <- turn{err: err}
	}
	if next != nil {
		next.done <- turn{lead: true}
	}
}

// WaitIdle returns, with the lock held as it was when called, once no
// round is being written and nothing waits.
func (w *Writer[T]) WaitIdle() {
	for w.writing {
		w.idle.Wait()
	}
}

// Busy reports, with the lock held, whether a round is being written or
// an item waits.
func (w *Writer[T]) Busy() bool { return w.writing || len(w.queue) > 0 }

// Waiting is, with the lock held, how many items wait for a round.
func (w *Writer[T]) Waiting() int { return len(w.queue) }

// Err is, with the lock held, the fatal error that broke the writer, or
// nil.
func (w *Writer[T]) Err() error { return w.broken }
