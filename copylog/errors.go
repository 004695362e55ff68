package copylog

import (
	"errors"
	"fmt"
)

// Sentinels callers branch on. Errors from this package wrap them; use
// errors.Is.
var (
	// ErrKeyMissing: no copy key was given (and the copy holds lines, or
	// there is nothing to tag new lines with).
	ErrKeyMissing = errors.New("copy key missing")
	// ErrTampered: a line does not check under the key, is not a copy line,
	// or the numbers show a line taken out, put twice or moved.
	ErrTampered = errors.New("copy changed")
	// ErrWrongKey: no line of the copy checks under the key given; it is
	// also an ErrTampered.
	ErrWrongKey = fmt.Errorf("%w: no line checks under the copy key given (is it this copy's key?)", ErrTampered)
	// ErrOtherExecutor: a line that checks under the key names another
	// executor; it is also an ErrTampered.
	ErrOtherExecutor = fmt.Errorf("%w: a line names another executor", ErrTampered)
	// ErrCutLine: the last line has no LF; a stop cut it.
	ErrCutLine = errors.New("copy's last line cut")
	// ErrLocked: another executor holds the copy.
	ErrLocked = errors.New("copy in use by another executor")
	// ErrUnwritable: a line could not be written; the log takes no more lines.
	ErrUnwritable = errors.New("copy cannot be written")
	// ErrClosed: the log was closed.
	ErrClosed = errors.New("copy closed")
)

// LineError is a fault found at one line of the copy. It wraps one of the
// sentinels above.
type LineError struct {
	Path   string // the copy's path ("" when reading bytes)
	Line   int    // 1-based line number
	Reason string // what is wrong, in words
	Err    error  // the sentinel
}

func (e *LineError) Error() string {
	where := "copy"
	if e.Path != "" {
		where = "copy " + e.Path
	}
	return fmt.Sprintf("%s line %d: %s", where, e.Line, e.Reason)
}

func (e *LineError) Unwrap() error { return e.Err }
