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
