package wire

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
)

func TestReader(t *testing.T) {
	long := strings.Repeat("x", 100)
	in := "a\n\nbb\r\n" + long + "\nccc\n" + long + "z"
	r := NewReaderMax(strings.NewReader(in), 50)
	type step struct {
		line string
		long int64
	}
	want := []step{{"a", 0}, {"", 0}, {"bb\r", 0}, {"", 100}, {"ccc", 0}, {"", 101}}
	for i, w := range want {
		line, err := r.ReadLine()
		var tl *TooLongError
		switch {
		case w.long > 0:
			if !errors.As(err, &tl) || tl.Length != w.long {
				t.Fatalf("step %d: %q %v; want too long %d", i, line, err, w.long)
			}
		case err != nil || string(line) != w.line:
			t.Fatalf("step %d: %q %v; want %q", i, line, err, w.line)
		}
	}
	if _, err := r.ReadLine(); !errors.Is(err, io.EOF) {
		t.Fatalf("end: %v", err)
	}
	// A last line without LF is returned.
	r = NewReader(strings.NewReader("{}\n{\"a\":1}"))
	if _, err := r.ReadLine(); err != nil {
		t.Fatal(err)
	}
	if line, err := r.ReadLine(); err != nil || string(line) != `{"a":1}` {
		t.Fatalf("last line: %q %v", line, err)
	}
	if _, err := r.ReadLine(); !errors.Is(err, io.EOF) {
		t.Fatalf("end: %v", err)
	}
}

// A line far longer than the buffer and the cap is skipped without being
// held: the reader's buffer never grows to its size.
func TestReaderSkipsLongLineAcrossBuffers(t *testing.T) {
	big := bytes.Repeat([]byte("y"), 3<<20)
	in := io.MultiReader(bytes.NewReader(big), strings.NewReader("\nok\n"))
	r := NewReaderMax(in, 1<<20)
	_, err := r.ReadLine()
	var tl *TooLongError
	if !errors.As(err, &tl) || tl.Length != 3<<20 {
		t.Fatalf("got %v", err)
	}
	if line, err := r.ReadLine(); err != nil || string(line) != "ok" {
		t.Fatalf("after: %q %v", line, err)
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestReaderPassesErrors(t *testing.T) {
	if _, err := NewReader(failingReader{}).ReadLine(); err == nil || errors.Is(err, io.EOF) {
		t.Fatalf("got %v", err)
	}
}

func TestWriterWholeLines(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			line := bytes.Repeat([]byte{byte('a' + g)}, 1000)
			for i := 0; i < 50; i++ {
				if err := w.WriteLine(line); err != nil {
					t.Error(err)
				}
			}
		}(g)
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 400 {
		t.Fatalf("%d lines", len(lines))
	}
	for _, l := range lines {
		if len(l) != 1000 || strings.Count(l, l[:1]) != 1000 {
			t.Fatalf("interleaved line %.20q", l)
		}
	}
}
