package sidecar

import (
	"fmt"
	"log/slog"

	"github.com/seed-6e06167c/mcp-executor/receipts/book"
)

// A book holds at most book.MaxEntries entries (the format's cap). The
// executor stops taking new calls book.FullReserve entries before it, so
// that every call already in flight, each refusal it leads to, and the
// receipts a restart writes from the copy still find room: no stub is ever
// left unwritten because the book was full. A new call past that point is
// answered 1001 with the reason, nothing is written to the book or the
// copy, and BookFull is closed so that serve turns /readyz false (saying
// why) while /healthz stays live: a restart would not help. The way on is
// a new book: the person signs a new slip and agent.book names a new file.

// fullAt is the number of entries from which the executor takes no new
// call.
const fullAt = book.MaxEntries - book.FullReserve

// bookFullWhy says why the executor takes no new call because the book is
// full, "" while there is room. The first time it is full it logs so and
// closes bookFullCh.
func (e *Executor) bookFullWhy() string {
	n := e.ledger.Size()
	if n < e.fullAt {
		return ""
	}
	why := fmt.Sprintf("the book is full: it holds %d entries, and the last %d of the %d a book may hold are kept for the calls in flight; "+
		"have the person sign a new slip and point agent.book at a new file", n, book.MaxEntries-e.fullAt, book.MaxEntries)
	e.bookFullOnce.Do(func() {
		e.log.Error("the executor takes no new calls: the book is full", slog.Int("bookEntries", n), slog.Int("maxEntries", book.MaxEntries))
		e.bookFullWhyText.Store(why)
		close(e.bookFullCh)
	})
	return why
}

// BookFull is closed once the book is too full to take a new call (see
// BookFullReason). The executor goes on answering: calls in flight finish.
func (e *Executor) BookFull() <-chan struct{} { return e.bookFullCh }

// BookFullReason says why BookFull was closed ("" before).
func (e *Executor) BookFullReason() string {
	why, _ := e.bookFullWhyText.Load().(string)
	return why
}
