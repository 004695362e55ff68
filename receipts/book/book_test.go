package book

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files")

func openEmpty(t testing.TB, f *fixture) (*Book, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "book.jsonl")
	b, err := OpenBook(path, f.opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b, path
}

func TestOpenBookCreatesTheFile(t *testing.T) {
	f := newFixture(t, nil)
	b, path := openEmpty(t, f)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the book was not created: %v", err)
	}
	// An empty book allows nothing: the slip must be written first.
	p := Proposal{Slip: f.slip.Fingerprint, Action: "tool.a", With: "executor", When: f.start.Add(time.Minute)}
	if d := b.Ledger().CheckBefore(p); d.Allowed || !slices.Equal(codes(d.Problems), []string{"record-not-sound"}) {
		t.Fatalf("an empty book: %+v", d)
	}
	if err := b.Append(f.slipLine()); err != nil {
		t.Fatal(err)
	}
	if d := b.Ledger().CheckBefore(p); !d.Allowed {
		t.Fatalf("after the slip: %+v", d)
	}
	// A second executor cannot open the same book.
	if _, err := OpenBook(path, f.opts); err == nil || !strings.Contains(err.Error(), "another executor") {
		t.Fatalf("a second open: %v", err)
	}
}

func TestOpenBookStopsAtATornLastLine(t *testing.T) {
	f := newFixture(t, nil)
	slipText := lineBytes(t, f.slipLine())
	stub := lineBytes(t, f.line(t, Position{}, Proposal{Slip: f.slip.Fingerprint, Action: "tool.a", With: "executor", When: f.start.Add(time.Minute)}))
	torn := append(append([]byte{}, slipText...), stub[:len(stub)/2]...)
	path := filepath.Join(t.TempDir(), "book.jsonl")
	if err := os.WriteFile(path, torn, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := OpenBook(path, f.opts)
	if err == nil || !strings.Contains(err.Error(), "line 2 is torn") {
		t.Fatalf("OpenBook of a torn book: %v; want an error naming line 2", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, torn) {
		t.Fatal("opening a torn book changed it")
	}
}

func TestOpenBookTakesALastLineWithoutAFeed(t *testing.T) {
	f := newFixture(t, nil)
	slipText := lineBytes(t, f.slipLine())
	path := filepath.Join(t.TempDir(), "book.jsonl")
	if err := os.WriteFile(path, slipText[:len(slipText)-1], 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := OpenBook(path, f.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	p := Proposal{Slip: f.slip.Fingerprint, Action: "tool.a", With: "executor", When: f.start.Add(time.Minute)}
	if err := b.Append(f.line(t, Position{}, p)); err != nil {
		t.Fatal(err)
	}
	text, _ := os.ReadFile(path)
	if n := bytes.Count(text, []byte("\n")); n != 2 || text[len(text)-1] != '\n' {
		t.Fatalf("the book has %d line feeds; want 2, ending the text", n)
	}
	if res := CheckBook(text, f.opts); !res.Summary.Intact || res.Size != 2 {
		t.Fatalf("the book is not intact: %+v", res.Summary)
	}
}

func TestAppendRefusesALineWithAProblem(t *testing.T) {
	f := newFixture(t, nil)
	b, path := openEmpty(t, f)
	if err := b.Append(f.slipLine()); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	p := Proposal{Slip: f.slip.Fingerprint, Action: "tool.a", With: "executor", When: f.start.Add(time.Minute)}
	for name, line := range map[string][]byte{
		"a stub out of its chain": func() []byte {
			l := lineBytes(t, f.line(t, Position{Seq: 3, Previous: f.slip.Fingerprint}, p))
			return l[:len(l)-1]
		}(),
		"a kind not supported": []byte(`{"seal":{}}`),
		"the slip again":       func() []byte { l := lineBytes(t, f.slipLine()); return l[:len(l)-1] }(),
		"not canonical":        []byte(`{ "slip":1}`),
	} {
		if err := b.AppendLine(line); err == nil {
			t.Errorf("%s: appended", name)
		}
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Fatal("a refused line changed the book")
	}
	if err := b.Ledger().Sound(); err != nil {
		t.Fatalf("the book is no longer sound: %v", err)
	}
}

// TestAppendFailure: a write that fails leaves no partial line and the
// book refuses every append after it, saying why; the ledger refuses
// every action. The file is made to fail by closing it under the book.
func TestAppendFailure(t *testing.T) {
	f := newFixture(t, nil)
	b, path := openEmpty(t, f)
	if err := b.Append(f.slipLine()); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	b.f.Close()
	p := Proposal{Slip: f.slip.Fingerprint, Action: "tool.a", With: "executor", When: f.start.Add(time.Minute)}
	err := b.Append(f.line(t, Position{}, p))
	if err == nil || !strings.Contains(err.Error(), "refuses every further append") {
		t.Fatalf("a failed write: %v", err)
	}
	if err2 := b.Append(f.line(t, Position{}, p)); err2 == nil || !strings.Contains(err2.Error(), "refuses") {
		t.Fatalf("an append after a failed write: %v", err2)
	}
	if d := b.Ledger().CheckBefore(p); d.Allowed || !slices.Equal(codes(d.Problems), []string{"record-not-sound"}) {
		t.Fatalf("the ledger after a failed write: %+v", d)
	}
	if b.Ledger().Sound() == nil {
		t.Fatal("the ledger says the book is sound after a failed write")
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Fatal("the failed write left bytes in the book")
	}
}

// TestConcurrentCallsGoInInOrder: calls reserved together have their
// stubs written in reservation order, several lines to one fsync.
func TestConcurrentCallsGoInInOrder(t *testing.T) {
	f := newFixture(t, map[string]any{"requires": []any{map[string]any{"need": "countersignature"}}})
	b, path := openEmpty(t, f)
	if err := b.Append(f.slipLine()); err != nil {
		t.Fatal(err)
	}
	const calls = 12
	var wg sync.WaitGroup
	errs := make(chan error, calls)
	for i := range calls {
		res, p := reserveCall(t, f, b, i)
		wg.Go(func() { errs <- appendAtTurn(t, f, b, res, p) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	text, _ := os.ReadFile(path)
	res := CheckBook(text, f.opts)
	if !res.Summary.Intact || !res.Summary.WithinSlips || res.Summary.Counts.Stubs != calls || res.Summary.Counts.Countersigned != calls {
		t.Fatalf("the book after %d calls: %+v", calls, res.Summary)
	}
}

// TestUnsupportedKindsAreProblems: a book holding a kind this package does
// not read is never intact, and each such line is named with its kind.
func TestUnsupportedKindsAreProblems(t *testing.T) {
	vf := loadVectors(t, "books.json")
	checked := 0
	for _, c := range vf.Cases {
		text := c["text"].(string)
		res := CheckBook([]byte(text), optionsOf(c["options"]))
		for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
			var v map[string]any
			if json.Unmarshal([]byte(line), &v) != nil {
				continue
			}
			kind := ""
			if _, isSeal := v["seal"]; isSeal {
				continue // seals are read (seals_test.go)
			}
			for _, k := range []string{"terms", "vouching", "withdrawal", "stamps"} {
				if _, ok := v[k]; ok {
					kind = k
					break
				}
			}
			if kind == "" {
				continue
			}
			checked++
			e := res.Entries[i]
			if len(e.Problems) != 1 || e.Problems[0].Code != "unknown-entry" || !strings.Contains(e.Problems[0].Message, strings.TrimSuffix(kind, "s")) {
				t.Errorf("%s, line %d (%s): %+v", c["name"], i+1, kind, e.Problems)
			}
			if res.Summary.Intact || res.Summary.WithinSlips {
				t.Errorf("%s: a book with a %s line reads as intact or within its slips", c["name"], kind)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no line of an unsupported kind was found in the vectors")
	}
}

func TestVerifyReport(t *testing.T) {
	vf := loadVectors(t, "books.json")
	for _, c := range vf.Cases {
		name := c["name"].(string)
		if name != "every kind of finding" && name != "two stubs within the slip" {
			continue
		}
		opts := optionsOf(c["options"])
		path := filepath.Join(t.TempDir(), "book.jsonl")
		if err := os.WriteFile(path, []byte(c["text"].(string)), 0o644); err != nil {
			t.Fatal(err)
		}
		rep, err := VerifyFile(path, opts.IssuerKeys)
		if err != nil {
			t.Fatal(err)
		}
		rep.Path = "book.jsonl"
		// Verify (the book's text in memory) reports the same as VerifyFile.
		inMemory := Verify([]byte(c["text"].(string)), Options{IssuerKeys: opts.IssuerKeys})
		inMemory.Path = rep.Path
		if a, b := mustJSON(t, inMemory), mustJSON(t, rep); !bytes.Equal(a, b) {
			t.Errorf("%s: Verify reports\n%s\nand VerifyFile\n%s", name, a, b)
		}
		wantExit := 1
		if name == "two stubs within the slip" {
			wantExit = 0
		}
		if rep.ExitCode() != wantExit {
			t.Errorf("%s: exit code %d, want %d", name, rep.ExitCode(), wantExit)
		}
		var human bytes.Buffer
		if err := rep.Render(&human); err != nil {
			t.Fatal(err)
		}
		js, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		golden := filepath.Join("testdata", strings.ReplaceAll(name, " ", "-")+".golden")
		got := append(append(human.Bytes(), '\n'), js...)
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
	if _, err := VerifyFile(filepath.Join(t.TempDir(), "missing"), nil); err == nil {
		t.Fatal("a missing book verified")
	}
}

// FuzzCheckBook: the checker never fails on any text, every entry is
// numbered in order, and a book with a problem is never intact.
func FuzzCheckBook(f *testing.F) {
	f.Add([]byte(""))
	f.Add([]byte("\n"))
	f.Add([]byte("{}\n[]\n"))
	f.Add([]byte("{\"slip\":{}}\r\n"))
	f.Add([]byte("\xef\xbb\xbf{\"stub\":{\"payload\":\"\",\"signatures\":[]}}"))
	vf := loadVectors(f, "books.json")
	for _, c := range vf.Cases {
		if text := c["text"].(string); len(text) < 40000 {
			f.Add([]byte(text))
		}
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		res := CheckBook(text, Options{IssuerKeys: []string{"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}})
		for i, e := range res.Entries {
			if e.Index != i {
				t.Fatalf("entry %d numbered %d", i, e.Index)
			}
			for _, p := range e.Problems {
				if p.Code == "" {
					t.Fatalf("entry %d: a problem without a code", i)
				}
			}
		}
		if res.Summary.ProblemFound && res.Summary.Intact {
			t.Fatal("a book with a problem reads as intact")
		}
	})
}

// TestOpenBookFindsADamagedSignature: a book whose signatures are checked
// on every core at once still gives the answer of a reading in order.
func TestOpenBookFindsADamagedSignature(t *testing.T) {
	vf := loadVectors(t, "books.json")
	for _, c := range vf.Cases {
		name := c["name"].(string)
		if name != "a stub changed after signing" && name != "two stubs within the slip" && name != "every kind of finding" {
			continue
		}
		opts := optionsOf(c["options"])
		text := []byte(c["text"].(string))
		path := filepath.Join(t.TempDir(), "book.jsonl")
		if err := os.WriteFile(path, text, 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := OpenBook(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		res := CheckBook(text, opts)
		first := ""
		for _, e := range res.Entries {
			if len(e.Problems) > 0 {
				first = fmt.Sprintf("line %d of the book has a problem: %s", e.Index+1, e.Problems[0].Code)
				break
			}
		}
		err = b.Ledger().Sound()
		switch {
		case res.Summary.Intact && err != nil:
			t.Errorf("%s: intact, but the ledger says %v", name, err)
		case !res.Summary.Intact && (err == nil || !strings.HasPrefix(err.Error(), first)):
			t.Errorf("%s: %s, but the ledger says %v", name, first, err)
		}
		if b.Ledger().Counts() != res.Summary.Counts {
			t.Errorf("%s: counts %+v, the checker's %+v", name, b.Ledger().Counts(), res.Summary.Counts)
		}
		b.Close()
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAppendersTakeTurnsWriting: while one appender's sync is held, the
// lines of others wait; they are then written together by one of their
// own appenders (the writer hands on its turn), every append returns, and
// the book is whole. A sync that fails while lines wait fails them all,
// and no appender is left waiting.
func TestAppendersTakeTurnsWriting(t *testing.T) {
	for _, failSecond := range []bool{false, true} {
		t.Run(fmt.Sprintf("second-sync-fails=%v", failSecond), func(t *testing.T) {
			f := newFixture(t, nil)
			b, path := openEmpty(t, f)
			if err := b.Append(f.slipLine()); err != nil {
				t.Fatal(err)
			}
			var syncs atomic.Int32
			held, release := make(chan struct{}), make(chan struct{})
			b.syncFile = func() error {
				switch syncs.Add(1) {
				case 1:
					close(held)
					<-release
				case 2:
					if failSecond {
						return errors.New("the disk is gone")
					}
				}
				return b.syncData()
			}
			const calls = 8
			errs := make(chan error, calls)
			var wg sync.WaitGroup
			for i := range calls {
				res, p := reserveCall(t, f, b, i)
				wg.Go(func() { errs <- appendAtTurn(t, f, b, res, p) })
				if i == 0 {
					<-held // the first appender is the writer, held in its sync
				}
			}
			// The others reach the queue while the writer is held (each
			// has its place once the line before it is read into the
			// ledger, before that line is durable).
			deadline := time.Now().Add(10 * time.Second)
			for {
				b.wmu.Lock()
				n := b.w.Waiting()
				b.wmu.Unlock()
				if n == calls-1 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%d lines wait behind the held writer, not %d", n, calls-1)
				}
				time.Sleep(time.Millisecond)
			}
			close(release)
			wg.Wait()
			close(errs)
			failed := 0
			for err := range errs {
				if err != nil {
					failed++
				}
			}
			text, _ := os.ReadFile(path)
			res := CheckBook(text, f.opts)
			if !res.Summary.Intact {
				t.Fatalf("the book is not whole: %+v", res.Summary)
			}
			wantFailed, wantStubs := 0, calls
			if failSecond {
				wantFailed, wantStubs = calls-1, 1
			}
			if failed != wantFailed || res.Summary.Counts.Stubs != wantStubs {
				t.Fatalf("%d appends failed and the book holds %d stubs; want %d and %d", failed, res.Summary.Counts.Stubs, wantFailed, wantStubs)
			}
			if n := syncs.Load(); n != 2 && !failSecond {
				t.Fatalf("%d syncs for %d lines: the lines that waited were not written together in one", n, calls)
			}
		})
	}
}

// reserveCall reserves the i-th call of a test (tool.a, i seconds after
// the fixture's start).
func reserveCall(t *testing.T, f *fixture, b *Book, i int) (*Reservation, Proposal) {
	t.Helper()
	p := Proposal{Slip: f.slip.Fingerprint, Action: "tool.a", With: "executor", When: f.start.Add(time.Duration(i) * time.Second)}
	res, d := b.Ledger().Reserve(p)
	if res == nil {
		t.Fatalf("call %d not reserved: %+v", i, d)
	}
	return res, p
}

// appendAtTurn waits for the reservation's place in the chain and appends
// the stub made for it there.
func appendAtTurn(t *testing.T, f *fixture, b *Book, res *Reservation, p Proposal) error {
	pos, err := res.Position(context.Background())
	if err != nil {
		return err
	}
	return b.AppendStub(res, f.line(t, pos, p))
}
