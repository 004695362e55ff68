package wire

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

// writeCounter records each Write call.
type writeCounter struct {
	mu     sync.Mutex
	out    bytes.Buffer
	writes int
}

func (c *writeCounter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes++
	return c.out.Write(p)
}

// TestWriteLineShortAndLong: a short line goes out with its LF in one Write,
// a long one as the line itself then the LF, and lines from many
// goroutines never interleave either way.
func TestWriteLineShortAndLong(t *testing.T) {
	for _, size := range []int{0, 10, copyMax, copyMax + 1, 1 << 20} {
		c := &writeCounter{}
		w := NewWriter(c)
		line := []byte(strings.Repeat("x", size))
		if err := w.WriteLine(line); err != nil {
			t.Fatal(err)
		}
		wantWrites := 1
		if size > copyMax {
			wantWrites = 2
		}
		if c.writes != wantWrites || !bytes.Equal(c.out.Bytes(), append(line, '\n')) {
			t.Errorf("size %d: %d writes, %d bytes; want %d writes, %d bytes", size, c.writes, c.out.Len(), wantWrites, size+1)
		}
	}
	c := &writeCounter{}
	w := NewWriter(c)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			line := bytes.Repeat([]byte{byte('a' + i)}, copyMax+1+i)
			for range 4 {
				if err := w.WriteLine(line); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	for _, l := range bytes.Split(bytes.TrimSuffix(c.out.Bytes(), []byte("\n")), []byte("\n")) {
		if len(l) == 0 || bytes.Count(l, l[:1]) != len(l) || len(l) != copyMax+1+int(l[0]-'a') {
			t.Fatalf("a line of %d bytes is mixed or cut", len(l))
		}
	}
}
