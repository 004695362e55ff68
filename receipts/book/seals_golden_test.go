package book

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/internal/tsatest"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/seal"
	mtree "github.com/seed-6e06167c/mcp-executor/receipts/tree"
)

var updateSealed = flag.Bool("update-sealed", false, "write the sealed books in testdata again (signs seals: about a second each)")

// sealedBooks are books with seals and time-stamps, written once by
// `go test ./receipts/book -run TestSealedBooks -update-sealed` (a seal's
// SLH-DSA signature is slow) and read by every test of seals. The
// time-stamps are from tsatest's made-up services A and B, at the times
// each book needs.
type sealedBooks struct {
	Issuer   string `json:"issuer"`
	Sealer   string `json:"sealer"`
	ServiceA string `json:"serviceA"`
	ServiceB string `json:"serviceB"`
	// Sealed: slip, stub, stub, seal (stamps A and B), stub, seal (stamp A).
	Sealed string `json:"sealed"`
	// Dated: slip, stub dated an hour after the stamp of the seal after it, that seal.
	Dated string `json:"dated"`
	// SealDated: slip, stub, a seal dated two days after its own stamp.
	SealDated string `json:"sealDated"`
}

const sealedPath = "testdata/sealed-books.json"

func loadSealed(t *testing.T) sealedBooks {
	t.Helper()
	if *updateSealed {
		writeSealedBooks(t)
	}
	raw, err := os.ReadFile(sealedPath)
	if err != nil {
		t.Fatalf("%v (make it with: go test ./receipts/book -run TestSealedBooks -update-sealed)", err)
	}
	var b sealedBooks
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Fatal(err)
	}
	return b
}

func writeSealedBooks(t *testing.T) {
	f := newFixture(t, nil)
	recorder, err := seal.NewLocalSigner(bytes.Repeat([]byte{0x21}, 32), bytes.Repeat([]byte{0x22}, 32), bytes.Repeat([]byte{0x23}, 96))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := tsatest.New(bytes.Repeat([]byte{0x0a}, 32))
	b, _ := tsatest.New(bytes.Repeat([]byte{0x0b}, 32))
	out := sealedBooks{Issuer: f.pk.Key().Thumbprint, Sealer: recorder.Keys().Fingerprint(), ServiceA: a.Fingerprint, ServiceB: b.Fingerprint}

	type stamper struct {
		s  *tsatest.Service
		at time.Time
	}
	book := func(steps func(add func([]byte), stub func(time.Time), sealAt func(time.Time, ...stamper))) string {
		var lines [][]byte
		var tr mtree.Builder
		pos := Position{}
		previousSeal := ""
		add := func(l []byte) {
			lines = append(lines, l)
			tr.Add(l)
		}
		stub := func(when time.Time) {
			l := f.line(t, pos, Proposal{Action: "tool.a", With: "executor", When: when})
			pos = Position{Seq: pos.Seq + 1, Previous: l.Stub.Fingerprint}
			add(bytes.TrimSuffix(lineBytes(t, l), []byte("\n")))
		}
		sealAt := func(when time.Time, stamps ...stamper) {
			p, err := seal.Prepare(seal.Fields{Name: "the test recorder", Keys: recorder.Keys(), Size: tr.Size(), Root: tr.Root(), Previous: previousSeal, When: when})
			if err != nil {
				t.Fatal(err)
			}
			s, err := p.Sign(context.Background(), recorder)
			if err != nil {
				t.Fatal(err)
			}
			var tokens [][]byte
			for _, st := range stamps {
				tokens = append(tokens, st.s.Token(p.Stamped(), st.at, tsatest.Options{}))
			}
			line, err := s.Line(tokens)
			if err != nil {
				t.Fatal(err)
			}
			previousSeal = s.Fingerprint()
			add(line)
		}
		add(bytes.TrimSuffix(lineBytes(t, f.slipLine()), []byte("\n")))
		steps(add, stub, sealAt)
		return string(bytes.Join(lines, []byte("\n"))) + "\n"
	}
	t0 := f.start.Add(time.Hour)
	out.Sealed = book(func(_ func([]byte), stub func(time.Time), sealAt func(time.Time, ...stamper)) {
		stub(t0)
		stub(t0.Add(time.Minute))
		sealAt(t0.Add(2*time.Minute), stamper{a, t0.Add(2 * time.Minute)}, stamper{b, t0.Add(2*time.Minute + 5*time.Second)})
		stub(t0.Add(3 * time.Minute))
		sealAt(t0.Add(4*time.Minute), stamper{a, t0.Add(4 * time.Minute)})
	})
	out.Dated = book(func(_ func([]byte), stub func(time.Time), sealAt func(time.Time, ...stamper)) {
		stub(t0.Add(time.Hour))
		sealAt(t0, stamper{a, t0})
	})
	out.SealDated = book(func(_ func([]byte), stub func(time.Time), sealAt func(time.Time, ...stamper)) {
		stub(t0)
		sealAt(t0.Add(48*time.Hour), stamper{a, t0})
	})
	raw, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(sealedPath), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sealedPath, append(raw, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (b sealedBooks) opts(services ...string) Options {
	return Options{IssuerKeys: []string{b.Issuer}, StampServices: services}
}

func bookLines(text string) []string { return strings.Split(strings.TrimSuffix(text, "\n"), "\n") }

func joinLines(lines []string) []byte { return []byte(strings.Join(lines, "\n") + "\n") }

// problemCodes are every problem of a result, by entry index.
func problemCodes(res Result) map[int][]string {
	out := map[int][]string{}
	for _, e := range res.Entries {
		for _, p := range e.Problems {
			out[e.Index] = append(out[e.Index], p.Code)
		}
	}
	if len(res.Problems) > 0 {
		out[-1] = codes(res.Problems)
	}
	return out
}

func TestSealedBooks(t *testing.T) {
	b := loadSealed(t)
	lines := bookLines(b.Sealed)

	t.Run("sound, both services trusted", func(t *testing.T) {
		res := CheckBook([]byte(b.Sealed), b.opts(b.ServiceA, b.ServiceB))
		if len(problemCodes(res)) != 0 || !res.Summary.Intact || !res.Summary.WithinSlips {
			t.Fatalf("problems %v, summary %+v", problemCodes(res), res.Summary)
		}
		if s := res.Summary.Sealed; s == nil || s.Entries != 5 || s.Seal != 5 || s.When != "2026-11-01T10:04:00Z" {
			t.Fatalf("sealed %+v", s)
		}
		want := []ServiceSeal{{Service: b.ServiceA, Entries: 5, When: "2026-11-01T10:04:00Z", Seal: 5}, {Service: b.ServiceB, Entries: 3, When: "2026-11-01T10:02:05Z", Seal: 3}}
		slices.SortFunc(want, func(x, y ServiceSeal) int { return strings.Compare(x.Service, y.Service) })
		if !slices.Equal(res.Summary.Services, want) {
			t.Fatalf("services %+v, want %+v", res.Summary.Services, want)
		}
		if res.Summary.Counts.Seals != 2 {
			t.Fatalf("counts %+v", res.Summary.Counts)
		}
	})
	t.Run("service B not trusted", func(t *testing.T) {
		res := CheckBook([]byte(b.Sealed), b.opts(b.ServiceA))
		if len(problemCodes(res)) != 0 || !res.Summary.Intact {
			t.Fatalf("problems %v", problemCodes(res))
		}
		if len(res.Summary.Services) != 1 || res.Summary.Services[0].Service != b.ServiceA {
			t.Fatalf("services %+v", res.Summary.Services)
		}
		if len(res.Summary.NotCounted) != 1 || res.Summary.NotCounted[0] != (UncountedStamp{Seal: 3, Service: b.ServiceB, When: "2026-11-01T10:02:05Z"}) {
			t.Fatalf("not counted %+v", res.Summary.NotCounted)
		}
	})
	t.Run("no service trusted", func(t *testing.T) {
		res := CheckBook([]byte(b.Sealed), b.opts())
		if len(problemCodes(res)) != 0 || res.Summary.Sealed != nil || len(res.Summary.Services) != 0 || len(res.Summary.NotCounted) != 3 {
			t.Fatalf("problems %v, sealed %+v, services %+v, not counted %+v", problemCodes(res), res.Summary.Sealed, res.Summary.Services, res.Summary.NotCounted)
		}
	})
	t.Run("the expected recorder, and another", func(t *testing.T) {
		o := b.opts(b.ServiceA)
		o.SealKeys = []string{b.Sealer}
		if res := CheckBook([]byte(b.Sealed), o); len(problemCodes(res)) != 0 {
			t.Fatalf("the expected recorder: %v", problemCodes(res))
		}
		o.SealKeys = []string{strings.Repeat("A", 43)}
		got := problemCodes(CheckBook([]byte(b.Sealed), o))
		if !slices.Equal(got[3], []string{CodeSealerNotExpected}) || !slices.Equal(got[5], []string{CodeSealerNotExpected}) {
			t.Fatalf("another recorder: %v", got)
		}
	})
	t.Run("an entry before the seal taken out", func(t *testing.T) {
		got := problemCodes(CheckBook(joinLines([]string{lines[0], lines[1], lines[3]}), b.opts(b.ServiceA)))
		if !slices.Contains(got[2], CodeSealMismatch) {
			t.Fatalf("%v", got)
		}
	})
	t.Run("an entry changed before the seal", func(t *testing.T) {
		changed := slices.Clone(lines)
		changed[1] = lines[2] // the second stub in the first's place: the chain breaks, and the seal does not fit
		got := problemCodes(CheckBook(joinLines(changed), b.opts(b.ServiceA)))
		if !slices.Contains(got[3], CodeSealMismatch) || !slices.Contains(got[5], CodeSealMismatch) {
			t.Fatalf("%v", got)
		}
	})
	t.Run("a seal taken out", func(t *testing.T) {
		out := slices.Delete(slices.Clone(lines), 3, 4)
		got := problemCodes(CheckBook(joinLines(out), b.opts(b.ServiceA)))
		if !slices.Contains(got[4], CodeSealChainBroken) {
			t.Fatalf("%v", got)
		}
	})
	t.Run("the book cut back past a seal", func(t *testing.T) {
		// What is left still checks: only the copy shows it (format, §21.3).
		res := CheckBook(joinLines(lines[:4]), b.opts(b.ServiceA))
		if len(problemCodes(res)) != 0 || res.Summary.Sealed == nil || res.Summary.Sealed.Entries != 3 {
			t.Fatalf("%v %+v", problemCodes(res), res.Summary.Sealed)
		}
	})
	t.Run("a stamp over other data", func(t *testing.T) {
		var first, second map[string]any
		_ = json.Unmarshal([]byte(lines[3]), &first)
		_ = json.Unmarshal([]byte(lines[5]), &second)
		second["stamps"] = first["stamps"].([]any)[:1]
		swapped, err := canon.Marshal(canon.ReadBack(second))
		if err != nil {
			t.Fatal(err)
		}
		out := slices.Clone(lines)
		out[5] = string(swapped)
		got := problemCodes(CheckBook(joinLines(out), b.opts(b.ServiceA)))
		if !slices.Equal(got[5], []string{"stamp-wrong-data"}) {
			t.Fatalf("%v", got)
		}
	})
	t.Run("an entry dated after the stamp that covers it", func(t *testing.T) {
		res := CheckBook([]byte(b.Dated), b.opts(b.ServiceA))
		got := problemCodes(res)
		if !slices.Equal(got[1], []string{CodeDatedAfterStamp}) || len(got[2]) != 0 || res.Summary.Intact {
			t.Fatalf("%v", got)
		}
		// Not counted, the stamp settles nothing: the seal is dated before an entry it covers.
		got = problemCodes(CheckBook([]byte(b.Dated), b.opts()))
		if len(got[1]) != 0 || !slices.Equal(got[2], []string{"time-went-backwards"}) {
			t.Fatalf("not counted: %v", got)
		}
	})
	t.Run("a seal dated after its own stamp", func(t *testing.T) {
		got := problemCodes(CheckBook([]byte(b.SealDated), b.opts(b.ServiceA)))
		if !slices.Equal(got[2], []string{CodeDatedAfterStamp}) {
			t.Fatalf("%v", got)
		}
	})
	t.Run("the stream and the whole reading agree", func(t *testing.T) {
		for _, text := range []string{b.Sealed, b.Dated, b.SealDated} {
			whole := CheckBook([]byte(text), b.opts(b.ServiceA))
			rep := Verify([]byte(text), b.opts(b.ServiceA))
			n := 0
			for _, e := range whole.Entries {
				n += len(e.Problems)
			}
			if len(rep.Problems) != n || rep.Intact != whole.Summary.Intact {
				t.Fatalf("report %d problems intact %v; checker %d, %v", len(rep.Problems), rep.Intact, n, whole.Summary.Intact)
			}
		}
	})
}

// The report on a sealed book, for people and as JSON: service A trusted
// and the recorder named; B's stamp not counted; the entries after the
// last seal not time-stamped (the book with a stub after its last seal).
func TestSealedReportGolden(t *testing.T) {
	b := loadSealed(t)
	for name, text := range map[string]string{
		"sealed-book":      b.Sealed,
		"sealed-book-tail": strings.Join(bookLines(b.Sealed)[:4], "\n") + "\n",
	} {
		o := b.opts(b.ServiceA)
		o.SealKeys = []string{b.Sealer}
		rep := Verify([]byte(text), o)
		rep.Path = "book.jsonl"
		var human bytes.Buffer
		if err := rep.Render(&human); err != nil {
			t.Fatal(err)
		}
		js, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got := append(append(human.Bytes(), '\n'), js...)
		golden := filepath.Join("testdata", name+".golden")
		if *update {
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run with -update to write it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the report differs from %s:\n%s", name, golden, got)
		}
	}
}

// FuzzSealedBook: a book with seals and stamps, changed anywhere, is read
// without a panic, and the whole reading and the stream agree on what they
// find (every problem, intact or not, how far the stamps reach).
func FuzzSealedBook(f *testing.F) {
	raw, err := os.ReadFile(sealedPath)
	if err != nil {
		f.Fatal(err)
	}
	var b sealedBooks
	if err := json.Unmarshal(raw, &b); err != nil {
		f.Fatal(err)
	}
	for _, text := range []string{b.Sealed, b.Dated, b.SealDated} {
		f.Add([]byte(text))
	}
	opts := b.opts(b.ServiceA)
	f.Fuzz(func(t *testing.T, text []byte) {
		whole := CheckBook(text, opts)
		rep := Verify(text, opts)
		n := len(whole.Problems)
		for _, e := range whole.Entries {
			n += len(e.Problems)
		}
		if len(rep.Problems) != n || rep.Intact != whole.Summary.Intact {
			t.Fatalf("the report finds %d problems (intact %v), the checker %d (%v)", len(rep.Problems), rep.Intact, n, whole.Summary.Intact)
		}
		if (rep.Sealed == nil) != (whole.Summary.Sealed == nil) || (rep.Sealed != nil && *rep.Sealed != *whole.Summary.Sealed) {
			t.Fatalf("sealed: report %+v, checker %+v", rep.Sealed, whole.Summary.Sealed)
		}
	})
}
