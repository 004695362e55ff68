package book

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// onlyReader hides every method of its reader but Read, so VerifyReader
// cannot read it twice and checks each signature in its turn.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// TestVerifyOnEveryCoreGivesTheOrderedAnswer: for every book of the
// format's vectors (bad signatures among them), the report made with the
// signatures checked on every core is the report made checking each in
// its turn, and the one made from a reader that hands out one byte at a
// time.
func TestVerifyOnEveryCoreGivesTheOrderedAnswer(t *testing.T) {
	vf := loadVectors(t, "books.json")
	badSignatures := 0
	for _, c := range vf.Cases {
		text := []byte(c["text"].(string))
		opts := optionsOf(c["options"])
		parallel, err := VerifyReader(bytes.NewReader(text), opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		ordered, err := VerifyReader(onlyReader{bytes.NewReader(text)}, opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		bytewise, err := VerifyReader(iotest.OneByteReader(bytes.NewReader(text)), opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, pr := range ordered.Problems {
			if strings.HasSuffix(pr.Code, "signature-invalid") {
				badSignatures++
			}
		}
		p, _ := json.Marshal(parallel)
		o, _ := json.Marshal(ordered)
		b, _ := json.Marshal(bytewise)
		if !bytes.Equal(p, o) || !bytes.Equal(b, o) {
			t.Errorf("%s:\non every core %s\nin order     %s\nbyte by byte %s", c["name"], p, o, b)
		}
	}
	if badSignatures == 0 {
		t.Fatal("no book of the vectors has a signature that does not check: the reading again is not tested")
	}
}

// TestVerifyReaderFailsWithItsSource: an error reading the source is the
// answer, wherever it comes.
func TestVerifyReaderFailsWithItsSource(t *testing.T) {
	f := newFixture(t, nil)
	text := lineBytes(t, f.slipLine())
	src := io.MultiReader(bytes.NewReader(text), iotest.ErrReader(io.ErrUnexpectedEOF))
	if _, err := VerifyReader(src, f.opts, nil); err == nil || !strings.Contains(err.Error(), "unexpected EOF") {
		t.Fatalf("got %v", err)
	}
}

// TestEverySignatureCheckedOnce: reading a book on every core checks each
// signature once (where its line is parsed, or in the pool when the slip's
// keys were not known yet there), never twice; and a stub whose signature
// was changed is found as the ordered reading finds it.
func TestEverySignatureCheckedOnce(t *testing.T) {
	f := newFixture(t, nil)
	const stubs = 60
	path, _ := bookWithStubs(t, f, stubs)
	text := readFile(t, path)
	n := countSignatures(t, func() {
		rep, err := VerifyReader(bytes.NewReader(text), f.opts, nil)
		if err != nil || !rep.Intact {
			t.Fatalf("%+v %v", rep, err)
		}
	})
	if n != 4*stubs {
		t.Fatalf("%d signatures checked for %d stubs", n, stubs)
	}
	// Line 40's stub signed by another key set: its signatures are valid
	// base64url that do not check.
	other, err := jwk.NewLocalSigner(seeds(41))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(text), "\n")
	v, err := canon.Parse([]byte(strings.TrimSuffix(lines[40], "\n")))
	if err != nil {
		t.Fatal(err)
	}
	obj := v.(map[string]any)
	stub, err := record.Parse(obj["stub"], record.Stub)
	if err != nil {
		t.Fatal(err)
	}
	resigned, err := record.Sign(context.Background(), record.Stub, stub.Content, other)
	if err != nil {
		t.Fatal(err)
	}
	obj["stub"] = resigned.Value()
	lines[40] = string(canon.MustMarshal(obj)) + "\n"
	spoiled := []byte(strings.Join(lines, ""))
	parallel, err := VerifyReader(bytes.NewReader(spoiled), f.opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	ordered, err := VerifyReader(onlyReader{bytes.NewReader(spoiled)}, f.opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := json.Marshal(parallel)
	o, _ := json.Marshal(ordered)
	if !bytes.Equal(p, o) || parallel.Intact || len(parallel.Problems) == 0 || parallel.Problems[0].Line != 41 {
		t.Fatalf("on every core %s\nin order %s", p, o)
	}
}

// readInOrder reads a book the way it was read before it was read on
// every core: one line after another, each signature checked in its turn.
func readInOrder(text []byte, opts Options) ([]Entry, string) {
	r := newReader(opts, true)
	sc := newLineScanner(bytes.NewReader(text))
	var buf []byte
	for r.size < MaxEntries {
		line, _, err := sc.next(buf)
		buf = line
		if err != nil {
			break
		}
		r.leaf = sc.leaf
		_, _ = r.readLine(line, false)
	}
	root := r.tree.root()
	return r.entries, canon.B64(root[:])
}

// sameReports fails the test unless the two reports are the same as JSON.
func sameReports(t *testing.T, aName string, a *Report, bName string, b *Report) {
	t.Helper()
	aj, _ := json.Marshal(a)
	bj, _ := json.Marshal(b)
	if !bytes.Equal(aj, bj) {
		t.Fatalf("%s: %s\n%s: %s", aName, aj, bName, bj)
	}
}

// addVectorBooks seeds f with each book of the format's vectors under 40 KB
// and the first passkey its case trusts ("" for none).
func addVectorBooks(f *testing.F) {
	for _, c := range loadVectors(f, "books.json").Cases {
		if text := c["text"].(string); len(text) < 40000 {
			trust := ""
			if keys := optionsOf(c["options"]).IssuerKeys; len(keys) > 0 {
				trust = keys[0]
			}
			f.Add([]byte(text), trust)
		}
	}
}

// FuzzVerifyOnEveryCore: whatever the text, the report made on every core
// (a pool, then the reading again) is the report made by the workers'
// answers and the rest in turn, and CheckBook's entries and top
// fingerprint are those of a reading in order.
func FuzzVerifyOnEveryCore(f *testing.F) {
	f.Add([]byte(""), "")
	f.Add([]byte("{}\n\n{\"stub\":{\"payload\":\"\",\"signatures\":[]}}"), "")
	addVectorBooks(f)
	f.Fuzz(func(t *testing.T, text []byte, trust string) {
		opts := Options{IssuerKeys: []string{trust}}
		parallel, err := VerifyReader(bytes.NewReader(text), opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		turn, err := VerifyReader(onlyReader{bytes.NewReader(text)}, opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		sameReports(t, "on every core", parallel, "in turn", turn)
		res := CheckBook(text, opts)
		entries, root := readInOrder(text, opts)
		if res.Size > 0 && res.Root != root {
			t.Fatalf("top fingerprint %s, in order %s", res.Root, root)
		}
		if len(entries) != len(res.Entries) && res.Size > 0 {
			t.Fatalf("%d entries, in order %d", len(res.Entries), len(entries))
		}
		for i := range res.Entries {
			got, want := res.Entries[i], entries[i]
			// CheckBook adds the breaches settled at the end after an entry's own.
			if len(got.Breaches) < len(want.Breaches) {
				t.Fatalf("entry %d: breaches %v, in order %v", i, got.Breaches, want.Breaches)
			}
			got.Breaches = got.Breaches[:len(want.Breaches)]
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			if !bytes.Equal(g, w) {
				t.Fatalf("entry %d: %s\nin order: %s", i, g, w)
			}
		}
	})
}
