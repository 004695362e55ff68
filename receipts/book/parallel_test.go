package book

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"testing/iotest"
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
