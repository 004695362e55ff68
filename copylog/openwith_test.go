package copylog

import (
	"errors"
	"testing"
)

// TestOpenWithHandsEachLine: OpenWith hands every line of the copy, in
// order, to its function during the open's one read; an error from it
// ends the open with that error and leaves the copy free for the next
// open.
func TestOpenWithHandsEachLine(t *testing.T) {
	path := tempCopy(t)
	l := mustOpen(t, path)
	if err := l.Append(sentLine("c1"), receiptLine("c1", fp("s1")), sentLine("c2")); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	var seen []string
	l, err := OpenWith(path, testKey, testName, Visit{Each: func(ln Line) error {
		seen = append(seen, string(ln.Kind)+" "+ln.Call)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	want := []string{"sent c1", "receipt c1", "sent c2"}
	if len(seen) != len(want) {
		t.Fatalf("handed %q, want %q", seen, want)
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Fatalf("handed %q, want %q", seen, want)
		}
	}
	stop := errors.New("enough")
	if _, err := OpenWith(path, testKey, testName, Visit{Each: func(Line) error { return stop }}); !errors.Is(err, stop) {
		t.Fatalf("an error from the function: %v", err)
	}
	again := mustOpen(t, path) // the failed open let its lock go
	if err := again.Close(); err != nil {
		t.Fatal(err)
	}
}
