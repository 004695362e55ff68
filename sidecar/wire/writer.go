package wire

import (
	"io"
	"sync"
)

// Writer writes whole lines to an io.Writer, one at a time, so that lines
// written from several goroutines never interleave.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

// NewWriter writes lines to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// copyMax is the longest line WriteLine copies to write it with its LF in
// one Write call; a longer line is written as it is and then the LF, in two
// Write calls under the lock, so that a line of many MiB is not copied.
const copyMax = 64 << 10

// lf is the line end WriteLine writes after a long line.
var lf = []byte{'\n'}

// WriteLine writes line followed by one LF: in a single Write call up to
// copyMax bytes, else the line and then the LF without copying the line;
// either way no other line comes between. line must not hold an LF. It
// returns the underlying writer's error.
func (w *Writer) WriteLine(line []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(line) > copyMax {
		if _, err := w.w.Write(line); err != nil {
			return err
		}
		_, err := w.w.Write(lf)
		return err
	}
	w.buf = append(append(w.buf[:0], line...), '\n')
	_, err := w.w.Write(w.buf)
	return err
}
