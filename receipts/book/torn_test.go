package book

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRepairTornLine: only a torn last line the caller explains is moved aside and cut; every other
// book is left byte for byte as it was.
func TestRepairTornLine(t *testing.T) {
	f := newFixture(t, nil)
	slipLine := lineBytes(t, f.slipLine())
	stub := lineBytes(t, f.line(t, Position{}, Proposal{Slip: f.slip.Fingerprint, Action: "tool.a", With: "executor", When: f.start.Add(time.Minute)}))
	torn := stub[:len(stub)/2]
	long := []byte(`{"a":"` + strings.Repeat("x", MaxLineBytes) + `"`)
	// A book longer than the end the repair reads (MaxLineBytes+1 bytes).
	var big []byte
	for len(big) <= 3*MaxLineBytes {
		big = append(append(big, slipLine...), stub...)
	}
	longest := []byte(`{"a":"` + strings.Repeat("x", MaxLineBytes-6))
	for _, tc := range []struct {
		name      string
		text      []byte // nil: no file
		explained bool
		repaired  bool
	}{
		{"no book", nil, true, false},
		{"empty", []byte{}, true, false},
		{"whole lines", append(append([]byte{}, slipLine...), stub...), true, false},
		{"last line without its line feed", append(append([]byte{}, slipLine...), stub[:len(stub)-1]...), true, false},
		{"torn, not explained", append(append([]byte{}, slipLine...), torn...), false, false},
		{"torn, explained", append(append([]byte{}, slipLine...), torn...), true, true},
		{"torn and alone, explained", append([]byte{}, torn...), true, true},
		{"longer than any line written, explained", append(append([]byte{}, slipLine...), long...), true, false},
		{"torn after a long book, explained", append(append([]byte{}, big...), torn...), true, true},
		{"as long as the longest line, after a long book", append(append([]byte{}, big...), longest...), true, true},
		{"a byte longer than that", append(append([]byte{}, big...), append(longest, 'x')...), true, false},
		{"long book, whole lines", big, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "book.jsonl")
			if tc.text != nil {
				if err := os.WriteFile(path, tc.text, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			asked := false
			got, err := RepairTornLine(path, func() bool { asked = true; return tc.explained })
			if err != nil {
				t.Fatal(err)
			}
			if (got != nil) != tc.repaired {
				t.Fatalf("repaired %+v, want %v (asked %v)", got, tc.repaired, asked)
			}
			after, err := os.ReadFile(path)
			if tc.text == nil {
				if !os.IsNotExist(err) {
					t.Fatalf("a book was made: %v", err)
				}
				return
			}
			if !tc.repaired {
				if !bytes.Equal(after, tc.text) {
					t.Fatalf("the book changed")
				}
				return
			}
			cut := bytes.LastIndexByte(tc.text, '\n') + 1
			if !bytes.Equal(after, tc.text[:cut]) {
				t.Errorf("book after: %q, want %q", after, tc.text[:cut])
			}
			if want := bytes.Count(tc.text, []byte("\n")) + 1; got.Line != want {
				t.Errorf("line %d, want %d", got.Line, want)
			}
			kept, err := os.ReadFile(got.KeptAt)
			if err != nil || !bytes.Equal(kept, tc.text[cut:]) || !strings.HasPrefix(got.KeptAt, path+".torn-") {
				t.Errorf("kept at %s: %q (%v)", got.KeptAt, kept, err)
			}
			if fi, err := os.Stat(got.KeptAt); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("the kept line's file: %v %v, want mode 0600", fi, err)
			}
			if names, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*")); len(names) != 0 {
				t.Errorf("left in the folder: %v", names)
			}
			if _, err := OpenBook(path, f.opts); err != nil {
				t.Errorf("the book does not open after the repair: %v", err)
			}
		})
	}
}

// TestRepairTornLineLocked: a book another process holds is never touched.
func TestRepairTornLineLocked(t *testing.T) {
	f := newFixture(t, nil)
	path := filepath.Join(t.TempDir(), "book.jsonl")
	b, err := OpenBook(path, f.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := os.WriteFile(path, []byte(`{"slip":`), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := RepairTornLine(path, func() bool { return true })
	if err != nil || got != nil {
		t.Fatalf("%+v, %v", got, err)
	}
	if after, _ := os.ReadFile(path); string(after) != `{"slip":` {
		t.Errorf("the book changed: %q", after)
	}
}
