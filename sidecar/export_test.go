package sidecar

// BreakBook closes the book's file under a running executor, so that the
// next append fails as a real write to a file that cannot be written does.
// (A test cannot make a real disk fail on demand; the failure it gives is
// the operating system's own.)
func BreakBook(e *Executor) error { return e.book.Close() }

// BreakCopy closes the copy under a running executor, so that the next
// line cannot be written.
func BreakCopy(e *Executor) error { return e.copy.Close() }
