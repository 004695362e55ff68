package book

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// entriesBook is a book text: the slip (stating one software entry), two stubs naming details, and
// between them lines ReadEntries passes over (not JSON, a line longer than a book line may be).
func entriesBook(t testing.TB) (*fixture, []byte, [2]*record.Record) {
	t.Helper()
	software := canon.Fingerprint([]byte("rules"))
	f := newFixture(t, nil)
	f = newFixture(t, map[string]any{"agent": map[string]any{"keys": f.agent.Keys().Value(), "name": "assistant",
		"software": []any{map[string]any{"name": "Content rules of x", "sha256": software}}}})
	details := []record.Detail{record.TextDetail("executor.call", "a"), record.TextDetail("x", "1"), record.TextDetail("executor.call", "shadowed")}
	p := Proposal{Slip: f.slip.Fingerprint, Action: "tool.a", With: "executor", When: f.start.Add(time.Minute), Details: details}
	first := f.line(t, Position{}, p)
	p.Details, p.When = []record.Detail{record.TextDetail("executor.call", "b")}, p.When.Add(time.Second)
	second := f.line(t, Position{Seq: 1, Previous: first.Stub.Fingerprint}, p)
	var b bytes.Buffer
	b.Write(lineBytes(t, f.slipLine()))
	b.Write(lineBytes(t, first))
	b.WriteString("not a record\n")
	b.WriteString(`"` + strings.Repeat("x", MaxLineBytes+10) + `"` + "\n")
	b.Write(bytes.TrimSuffix(lineBytes(t, second), []byte("\n"))) // the last line without its line feed
	return f, b.Bytes(), [2]*record.Record{first.Stub, second.Stub}
}

func TestReadEntries(t *testing.T) {
	f, text, stubs := entriesBook(t)
	var got []FileEntry
	if err := ReadEntries(bytes.NewReader(text), func(e FileEntry) error { got = append(got, e); return nil }); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		line        int
		kind        string
		fingerprint string
	}{{1, KindSlip, f.slip.Fingerprint}, {2, KindStub, stubs[0].Fingerprint}, {5, KindStub, stubs[1].Fingerprint}}
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if g := got[i]; g.Line != w.line || g.Kind != w.kind || g.Fingerprint != w.fingerprint || g.Record.Fingerprint != w.fingerprint {
			t.Errorf("entry %d: line %d kind %q fingerprint %s, want %+v", i, g.Line, g.Kind, g.Fingerprint, w)
		}
	}
	if sw := got[0].Software; len(sw) != 1 || sw[0].Name != "Content rules of x" {
		t.Errorf("slip software: %+v", sw)
	}
	stub := got[1]
	if stub.Slip != f.slip.Fingerprint || stub.With != "executor" || len(stub.Details) != 3 {
		t.Errorf("stub: %+v", stub)
	}
	if fp, ok := stub.Detail("executor.call"); !ok || fp != canon.Fingerprint([]byte("a")) {
		t.Errorf("Detail: %q %v", fp, ok)
	}
	if _, ok := stub.Detail("absent"); ok {
		t.Errorf("Detail of an absent name")
	}
	if m := stub.DetailsByName(); len(m) != 2 || m["executor.call"] != canon.Fingerprint([]byte("a")) {
		t.Errorf("DetailsByName: %v", m)
	}
}

// TestReadEntriesStops: the callback's error ends the reading and comes back as it is, not wrapped,
// from ReadFileEntries and from VerifyFileEntries (which then gives no report); each names the file it
// could not open.
func TestReadEntriesStops(t *testing.T) {
	_, text, _ := entriesBook(t)
	path := filepath.Join(t.TempDir(), "book.jsonl")
	if err := os.WriteFile(path, text, 0o600); err != nil {
		t.Fatal(err)
	}
	readers := map[string]func(path string, fn func(FileEntry) error) error{
		"ReadFileEntries": ReadFileEntries,
		"VerifyFileEntries": func(path string, fn func(FileEntry) error) error {
			rep, err := VerifyFileEntries(path, nil, fn)
			if rep != nil && err != nil {
				t.Errorf("VerifyFileEntries gave a report beside its error %v", err)
			}
			return err
		},
	}
	for name, read := range readers {
		stop := errors.New("stop")
		n := 0
		err := read(path, func(FileEntry) error { n++; return stop })
		if err != stop || n != 1 { //nolint:errorlint // the error must come back as it is, not wrapped
			t.Errorf("%s: err %v after %d entries, want stop itself after 1", name, err, n)
		}
		err = read(filepath.Join(t.TempDir(), "none"), func(FileEntry) error { return nil })
		if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "reading book") {
			t.Errorf("%s: missing file: %v", name, err)
		}
	}
}

// FuzzReadEntries: any text is read without an error; entries come in order, on lines within the text,
// of the kinds a book takes, each with a fingerprint.
func FuzzReadEntries(f *testing.F) {
	_, text, _ := entriesBook(f)
	f.Add(text)
	f.Add([]byte("{}\n\n{\"stub\":1}\n"))
	f.Add([]byte(`{"refusal":{"payload":"e30","signatures":[]}}`))
	f.Add(bytes.Repeat([]byte("\n"), 5))
	f.Fuzz(func(t *testing.T, text []byte) {
		n := bytes.Count(text, []byte("\n")) + 1
		last := 0
		err := ReadEntries(bytes.NewReader(text), func(e FileEntry) error {
			if e.Line <= last || e.Line > n {
				t.Fatalf("line %d out of order or range (last %d, %d lines)", e.Line, last, n)
			}
			last = e.Line
			switch e.Kind {
			case KindSlip, KindStub, KindRefusal, KindCancellation, KindAcknowledgement:
			default:
				t.Fatalf("kind %q", e.Kind)
			}
			if !canon.IsFingerprint(e.Fingerprint) {
				t.Fatalf("fingerprint %q", e.Fingerprint)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}
