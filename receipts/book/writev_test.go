package book

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestWritten: what is left to write after n bytes, for cuts inside, at
// and across the buffers' edges, with empty buffers among them.
func TestWritten(t *testing.T) {
	bufs := func() [][]byte { return [][]byte{[]byte("ab"), nil, []byte("cde"), []byte(""), []byte("f")} }
	for _, c := range []struct {
		n    int
		want []string
	}{
		{0, []string{"ab", "", "cde", "", "f"}},
		{1, []string{"b", "", "cde", "", "f"}},
		{2, []string{"cde", "", "f"}},
		{3, []string{"de", "", "f"}},
		{5, []string{"f"}},
		{6, nil},
	} {
		var got []string
		for _, b := range written(bufs(), c.n) {
			got = append(got, string(b))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("after %d bytes: %q, want %q", c.n, got, c.want)
		}
	}
	if got := written([][]byte{nil, {}}, 0); len(got) != 0 {
		t.Errorf("empty buffers left: %q", got)
	}
}

// TestWriteAll: the book's batch write puts every buffer in the file, in
// order, byte for byte what one write of their concatenation (the old
// way) puts there: one buffer, a few, and more than one writev(2) takes,
// after what the file held.
func TestWriteAll(t *testing.T) {
	for _, count := range []int{1, 2, 17, maxIovecs + 300} {
		path := filepath.Join(t.TempDir(), "book.jsonl")
		if err := os.WriteFile(path, []byte("first\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		var bufs [][]byte
		want := []byte("first\n")
		for i := range count {
			line := bytes.Repeat([]byte{'a' + byte(i%26)}, i%300)
			if i%5 != 4 {
				line = append(line, '\n')
			}
			bufs = append(bufs, line)
			want = append(want, line...)
		}
		b := &Book{f: f}
		if err := b.writeAll(bufs); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%d buffers: the file holds %d bytes, want %d", count, len(got), len(want))
		}
	}
}

// BenchmarkWriteRound: one round of the writer with 16 lines of a stub
// line's size (about 14 KB), written as they are with writev(2)
// ("writev") and, the old way, copied into one buffer that grows line by
// line and written with one write(2) ("copied"); the file is cut back
// after each round, and nothing is synced. B/op is what a round allocates.
func BenchmarkWriteRound(b *testing.B) {
	f, err := os.OpenFile(filepath.Join(b.TempDir(), "book.jsonl"), os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	lines := make([][]byte, 16)
	for i := range lines {
		lines[i] = append(bytes.Repeat([]byte{'a' + byte(i)}, 14*1024), '\n')
	}
	bk := &Book{f: f}
	rewind := func(b *testing.B) {
		if err := f.Truncate(0); err != nil {
			b.Fatal(err)
		}
		if _, err := f.Seek(0, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("writev", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			bufs := make([][]byte, 0, len(lines)+1)
			bufs = append(bufs, lines...)
			if err := bk.writeAll(bufs); err != nil {
				b.Fatal(err)
			}
			rewind(b)
		}
	})
	b.Run("copied", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var buf []byte
			for _, l := range lines {
				buf = append(buf, l...)
			}
			if err := bk.writeAll([][]byte{buf}); err != nil {
				b.Fatal(err)
			}
			rewind(b)
		}
	})
}
