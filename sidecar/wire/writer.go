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

// WriteLine writes line followed by one LF in a single Write call. line must
// not hold an LF. It returns the underlying writer's error.
func (w *Writer) WriteLine(line []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(append(w.buf[:0], line...), '\n')
	_, err := w.w.Write(w.buf)
	if cap(w.buf) > 1<<20 {
		w.buf = nil
	}
	return err
}
