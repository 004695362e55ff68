package book

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// entryView is what a test compares of a FileEntry (the records are
// read apart in each reading, so their pointers differ).
type entryView struct {
	Line                    int
	Kind, Fingerprint, Slip string
	With                    string
	Details                 any
	Software                any
}

func viewOf(e FileEntry) entryView {
	return entryView{e.Line, e.Kind, e.Fingerprint, e.Slip, e.With, e.Details, e.Software}
}

// TestVerifyFileEntries: on every book of the format's vectors, on a book
// with lines that are not entries, on one whose signature does not check
// (it is read a second time) and on one of more than MaxEntries lines,
// VerifyFileEntries reports what VerifyFile reports and hands over, once
// each and in order, the entries ReadFileEntries hands over.
func TestVerifyFileEntries(t *testing.T) {
	type book struct {
		name  string
		text  []byte
		trust []string
	}
	var books []book
	for _, c := range loadVectors(t, "books.json").Cases {
		books = append(books, book{c["name"].(string), []byte(c["text"].(string)), optionsOf(c["options"]).IssuerKeys})
	}
	f, text, _ := entriesBook(t)
	books = append(books, book{"lines that are not entries", text, nil})
	books = append(books, book{"a signature that does not check", breakFirstStubSignature(t, text), nil})
	var large bytes.Buffer
	large.Write(lineBytes(t, f.slipLine()))
	large.WriteString(strings.Repeat("x\n", MaxEntries))
	large.Write(text[bytes.IndexByte(text, '\n')+1:]) // the stubs after the slip, past the last entry checked
	books = append(books, book{"more than MaxEntries lines", large.Bytes(), nil})

	readsAgain := 0
	readAgain = func() { readsAgain++ }
	t.Cleanup(func() { readAgain = func() {} })
	for _, b := range books {
		path := filepath.Join(t.TempDir(), "book.jsonl")
		if err := os.WriteFile(path, b.text, 0o600); err != nil {
			t.Fatal(err)
		}
		want, err := VerifyFile(path, b.trust)
		if err != nil {
			t.Fatal(err)
		}
		var wantEntries, gotEntries []entryView
		if err := ReadFileEntries(path, func(e FileEntry) error { wantEntries = append(wantEntries, viewOf(e)); return nil }); err != nil {
			t.Fatal(err)
		}
		got, err := VerifyFileEntries(path, b.trust, func(e FileEntry) error { gotEntries = append(gotEntries, viewOf(e)); return nil })
		if err != nil {
			t.Fatalf("%s: %v", b.name, err)
		}
		if a, w := mustJSON(t, got), mustJSON(t, want); !bytes.Equal(a, w) {
			t.Errorf("%s: VerifyFileEntries reports\n%s\nand VerifyFile\n%s", b.name, a, w)
		}
		if !reflect.DeepEqual(gotEntries, wantEntries) {
			t.Errorf("%s: VerifyFileEntries hands over\n%+v\nand ReadFileEntries\n%+v", b.name, gotEntries, wantEntries)
		}
	}
	if readsAgain == 0 {
		t.Error("no book was read a second time (a signature that did not check on the pool): that path went untested")
	}
}

// breakFirstStubSignature changes one character of the first signature of
// the book's second line (its first stub).
func breakFirstStubSignature(t *testing.T, text []byte) []byte {
	t.Helper()
	lines := bytes.SplitAfter(bytes.Clone(text), []byte("\n"))
	marker := []byte(`"signature":"`)
	i := bytes.Index(lines[1], marker)
	if i < 0 {
		t.Fatal("the test book's first stub has no signature")
	}
	at := i + len(marker)
	if lines[1][at] == 'A' {
		lines[1][at] = 'B'
	} else {
		lines[1][at] = 'A'
	}
	return bytes.Join(lines, nil)
}

// TestVerifyFileEntriesChangedWhileRead: a book whose signature does not
// check in the first reading, and is put right before the second, is
// reported as changed while it was read (its entries came from the first
// reading), not as intact.
func TestVerifyFileEntriesChangedWhileRead(t *testing.T) {
	_, withJunk, _ := entriesBook(t)
	lines := bytes.Split(withJunk, []byte("\n"))
	text := append(bytes.Join([][]byte{lines[0], lines[1], lines[4]}, []byte("\n")), '\n') // the slip and the two stubs
	path := filepath.Join(t.TempDir(), "book.jsonl")
	if err := os.WriteFile(path, breakFirstStubSignature(t, text), 0o600); err != nil {
		t.Fatal(err)
	}
	readAgain = func() {
		if err := os.WriteFile(path, text, 0o600); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(func() { readAgain = func() {} })
	rep, err := VerifyFileEntries(path, nil, func(FileEntry) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if rep.Intact || len(rep.Problems) != 1 || rep.Problems[0].Code != CodeChangedWhileRead || rep.Problems[0].Line != 0 {
		t.Errorf("report: intact %v, problems %+v", rep.Intact, rep.Problems)
	}
	if rep, err := VerifyFile(path, nil); err != nil || !rep.Intact {
		t.Errorf("the book as it is now: %+v %v", rep, err)
	}
}

// FuzzVerifyEntries: for any text, the check that hands over entries
// reports what VerifyReader reports, and hands over, once each and in
// order, the entries ReadEntries hands over.
func FuzzVerifyEntries(f *testing.F) {
	f.Add([]byte(""), "")
	f.Add([]byte("{}\n\n{\"stub\":{\"payload\":\"\",\"signatures\":[]}}"), "")
	_, text, _ := entriesBook(f)
	f.Add(text, "")
	addVectorBooks(f)
	f.Fuzz(func(t *testing.T, text []byte, trust string) {
		opts := Options{IssuerKeys: []string{trust}}
		want, err := VerifyReader(bytes.NewReader(text), opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		var wantEntries, gotEntries []entryView
		if err := ReadEntries(bytes.NewReader(text), func(e FileEntry) error { wantEntries = append(wantEntries, viewOf(e)); return nil }); err != nil {
			t.Fatal(err)
		}
		got, err := verifyStream(bytes.NewReader(text), opts, streamHooks{file: func(e FileEntry) error {
			gotEntries = append(gotEntries, viewOf(e))
			return nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		sameReports(t, "handing over entries", got, "VerifyReader", want)
		if !reflect.DeepEqual(gotEntries, wantEntries) {
			t.Fatalf("handed over %+v\nReadEntries %+v", gotEntries, wantEntries)
		}
	})
}
