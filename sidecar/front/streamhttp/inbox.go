package streamhttp

import (
	"errors"
	"io"
	"sync"

	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// errInputEnded is a line put after the session's input ended.
var errInputEnded = errors.New("the session takes no more lines")

// errInboxFull is a line put while the executor session has too many lines
// still to read.
var errInboxFull = errors.New("the session has too many lines waiting to be read")

// inLine is one client line with its reading.
type inLine struct {
	line []byte
	m    *wire.Message
}

// inbox holds the lines an executor session has still to read, in the
// order they were put; one reader takes them.
type inbox struct {
	mu     sync.Mutex
	items  []inLine
	bytes  int
	closed bool
	ready  chan struct{} // a token when something was put or the inbox closed
	max    int           // bytes
}

func newInbox(maxBytes int) *inbox {
	return &inbox{ready: make(chan struct{}, 1), max: maxBytes}
}

// put adds a line for the reader.
func (b *inbox) put(line []byte, m *wire.Message) error {
	b.mu.Lock()
	switch {
	case b.closed:
		b.mu.Unlock()
		return errInputEnded
	case b.bytes+len(line) > b.max && len(b.items) > 0:
		b.mu.Unlock()
		return errInboxFull
	}
	b.items = append(b.items, inLine{line: line, m: m})
	b.bytes += len(line)
	b.mu.Unlock()
	b.signal()
	return nil
}

func (b *inbox) signal() {
	select {
	case b.ready <- struct{}{}:
	default:
	}
}

// take returns the next line, waiting for one; io.EOF once the inbox is
// closed and every line put before was taken.
func (b *inbox) take() ([]byte, *wire.Message, error) {
	for {
		b.mu.Lock()
		if len(b.items) > 0 {
			it := b.items[0]
			b.items[0] = inLine{}
			b.items = b.items[1:]
			b.bytes -= len(it.line)
			b.mu.Unlock()
			return it.line, it.m, nil
		}
		closed := b.closed
		b.mu.Unlock()
		if closed {
			return nil, nil, io.EOF
		}
		<-b.ready
	}
}

// close ends the input: the reader gets io.EOF after the lines put before.
func (b *inbox) close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.signal()
}
