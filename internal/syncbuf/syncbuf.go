// Package syncbuf is a bytes.Buffer safe for concurrent writers and readers, for collecting the output of
// processes and goroutines in tests (a child's stderr, a server's log) while the test reads it.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer collects writes under a mutex. The zero value is ready to use.
type Buffer struct {
	mu     sync.Mutex
	b      bytes.Buffer
	writes int
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.writes++
	return b.b.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Writes is how many times Write was called.
func (b *Buffer) Writes() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.writes
}
