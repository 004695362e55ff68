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
	// A line longer than the buffer is kept as the buffer's chunks and
	// joined once at its end into a slice of its exact size: growing one
	// slice by appending would leave several times the line in garbage.
	var parts [][]byte
	size := 0
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
		case size+n > r.max:
			skipped = int64(size + n)
			parts = nil
		case n > 0:
			parts = append(parts, append([]byte(nil), chunk[:n]...))
			size += n
		}
		if err == nil {
			if skipped > 0 {
				return nil, &TooLongError{Length: skipped}
			}
			return join(parts, size), nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == io.EOF {
			if skipped > 0 {
				return nil, &TooLongError{Length: skipped}
			}
			if size > 0 {
				return join(parts, size), nil
			}
			return nil, io.EOF
		}
		return nil, err
	}
}

// join returns parts, size bytes in all, as one new slice of that size
// (parts itself when it is one; an empty slice, not nil, when none).
func join(parts [][]byte, size int) []byte {
	switch len(parts) {
	case 0:
		return []byte{}
	case 1:
		return parts[0]
	}
	line := make([]byte, 0, size)
	for _, p := range parts {
		line = append(line, p...)
	}
	return line
}
