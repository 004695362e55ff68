package wire

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// MaxLine is the longest line accepted, LF not counted: 16 MiB.
const MaxLine = 16 << 20

// TooLongError reports a line over the cap; the reader has skipped it.
type TooLongError struct {
	Length int64 // bytes in the line, LF not counted
}

func (e *TooLongError) Error() string {
	return fmt.Sprintf("line of %d bytes is longer than the cap", e.Length)
}

// Reader reads LF-terminated lines.
type Reader struct {
	br  *bufio.Reader
	max int
}

// NewReader reads lines of at most MaxLine bytes from r.
func NewReader(r io.Reader) *Reader { return NewReaderMax(r, MaxLine) }

// NewReaderMax reads lines of at most limit bytes from r.
func NewReaderMax(r io.Reader, limit int) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10), max: limit}
}

// ReadLine returns the next line without its LF, in a new slice the caller
// owns. A line over the cap is skipped to its end without being held whole
// and reported as *TooLongError; reading may go on after it. A last line
// without LF is returned at EOF; after it ReadLine returns io.EOF. Other
// errors are the underlying reader's.
func (r *Reader) ReadLine() ([]byte, error) {
	var line []byte
	var skipped int64
	for {
		chunk, err := r.br.ReadSlice('\n')
		n := len(chunk)
		if err == nil {
			n-- // the LF
		}
		switch {
		case skipped > 0:
			skipped += int64(n)
		case len(line)+n > r.max:
			skipped = int64(len(line) + n)
			line = nil
		default:
			line = append(line, chunk[:n]...)
		}
		if err == nil {
			if skipped > 0 {
				return nil, &TooLongError{Length: skipped}
			}
			if line == nil {
				line = []byte{}
			}
			return line, nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == io.EOF {
			if skipped > 0 {
				return nil, &TooLongError{Length: skipped}
			}
			if len(line) > 0 {
				return line, nil
			}
			return nil, io.EOF
		}
		return nil, err
	}
}
