package book

import (
	"fmt"
	"io"
	"os"

	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
)

// FileEntry is one entry of a book file as [ReadEntries] hands it over:
// what a caller that already trusts the book (or lets the checker judge it)
// reads of a line without checking it again.
type FileEntry struct {
	Line        int            // 1-based
	Kind        string         // KindSlip, KindStub, KindRefusal, KindCancellation, KindAcknowledgement or KindPass
	Record      *record.Record // the entry's record (for a stub line, the stub)
	Fingerprint string         // the record's fingerprint
	Content     map[string]any // the record's content
	Slip        string         // the content's slip member ("" for a slip)
	With        string         // the content's with member ("" where none)
	Pass        string         // the content's pass member: the pass a helper's stub is under ("" where none)
	// Details are the content's details in order, each whose name is text
	// (a stub's and an approval's); nil where none.
	Details []record.Detail
	// Software is a slip's agent.software; nil for other kinds, or where
	// the slip's content does not read.
	Software []slip.Software
}

// Detail returns the fingerprint the entry's first detail named name
// holds.
func (e FileEntry) Detail(name string) (string, bool) {
	for _, d := range e.Details {
		if d.Name == name {
			return d.SHA256, true
		}
	}
	return "", false
}

// DetailsByName maps each detail name (not empty) to the fingerprint of its
// first detail.
func (e FileEntry) DetailsByName() map[string]string {
	out := make(map[string]string, len(e.Details))
	for _, d := range e.Details {
		if _, seen := out[d.Name]; d.Name != "" && !seen {
			out[d.Name] = d.SHA256
		}
	}
	return out
}

// ReadEntries reads a book line by line from r and hands each entry it can
// read to fn, in order. Lines that are not canonical JSON, hold no record
// of a kind the book takes, or are longer than MaxLineBytes are passed over
// (the checker reports them), their numbers kept. It holds a few lines at
// a time, never the whole book, and parses them on every core
// (parseLines). fn's error stops the reading and is returned as it is; an
// error reading r is returned too.
func ReadEntries(r io.Reader, fn func(FileEntry) error) error {
	n := 0
	return parseLines(r, 0, nil, Options{}, func(pl *parsedLine) error {
		switch {
		case pl.noLine:
			return nil
		case pl.ioErr != nil:
			return pl.ioErr
		}
		n++
		if e, ok := pl.fileEntry(n); ok {
			return fn(e)
		}
		return nil
	})
}

// fileEntry is the entry ReadEntries hands over for the line numbered n,
// if the line holds one.
func (pl *parsedLine) fileEntry(n int) (FileEntry, bool) {
	if pl.err != nil || pl.obj == nil {
		return FileEntry{}, false
	}
	e, ok := entryOf(pl.obj)
	e.Line = n
	return e, ok
}

// ReadFileEntries is ReadEntries over the book file at path.
func ReadFileEntries(path string, fn func(FileEntry) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("reading book %s: %w", path, err)
	}
	defer func() { _ = f.Close() }() // read only: a failed close loses nothing
	fromFn := false
	err = ReadEntries(f, func(e FileEntry) error {
		err := fn(e)
		fromFn = err != nil
		return err
	})
	if err != nil && !fromFn {
		return fmt.Errorf("reading book %s: %w", path, err)
	}
	return err
}

// entryOf reads the entry of a line's value (whose records a worker may
// have read already: preParsed).
func entryOf(obj map[string]any) (FileEntry, bool) {
	for _, kind := range []string{KindSlip, KindStub, KindRefusal, KindCancellation, KindAcknowledgement, KindPass} {
		if obj[kind] == nil {
			continue
		}
		rec, err := parsedRecord(obj[kind], record.Kind(kind))
		if err != nil {
			return FileEntry{}, false
		}
		e := FileEntry{Kind: kind, Record: rec, Fingerprint: rec.Fingerprint, Content: rec.Content}
		e.Slip, _ = rec.Content["slip"].(string)
		e.With, _ = rec.Content["with"].(string)
		if kind != KindPass {
			e.Pass, _ = rec.Content["pass"].(string)
		}
		e.Details = contentDetails(rec.Content)
		if kind == KindSlip {
			if sl, err := slip.Parse(rec.Content); err == nil {
				e.Software = sl.Agent.Software
			}
		}
		return e, true
	}
	return FileEntry{}, false
}

// contentDetails reads a content's details whose names are text.
func contentDetails(c map[string]any) []record.Detail {
	list, _ := c["details"].([]any)
	var out []record.Detail
	for _, d := range list {
		m, _ := d.(map[string]any)
		name, ok := m["name"].(string)
		if !ok {
			continue
		}
		sum, _ := m["sha256"].(string)
		out = append(out, record.Detail{Name: name, SHA256: sum})
	}
	return out
}
