package sidecar

// BreakBook closes the book's file under a running executor, so that the
// next append fails as a real write to a file that cannot be written does.
// (A test cannot make a real disk fail on demand; the failure it gives is
// the operating system's own.)
func BreakBook(e *Executor) error { return e.book.Close() }

// BreakCopy closes the copy under a running executor, so that the next
// line cannot be written.
func BreakCopy(e *Executor) error { return e.copy.Close() }

// FillBookAt makes the executor take the book as full from n entries
// (the real point is 99,000: a test cannot sign that many).
func FillBookAt(e *Executor, n int) { e.fullAt = n }

// BookSize is the number of entries in the executor's book.
func BookSize(e *Executor) int { return e.ledger.Size() }

// CallsRecorded waits until every call sent so far has its stub, its
// answer and its copy's receipt line (which follows the answer). Call it
// only while no other call is being taken.
func CallsRecorded(e *Executor) { e.commits.Wait() }
