package copylog

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/internal/peakrss"
	"github.com/seed-6e06167c/mcp-executor/receipts/receipt"
)

// BenchmarkCompareMemory compares copies of 1,000, 10,000 and 90,000 calls
// (a sent and a receipt line each, real tags) with a book holding each
// call's stub, in child processes (this test binary run again), and
// reports each child's peak RSS (VmHWM): "stream" is what compare does
// (FileLines and a book handed over entry by entry into CompareLines),
// "slice" the old way (ReadFile, every line and every book entry in
// memory, then Compare). Every call matches, so the figures are those of
// the bookkeeping, not of findings.
func BenchmarkCompareMemory(b *testing.B) {
	dir := b.TempDir()
	for _, mode := range []string{"stream", "slice"} {
		for _, n := range []int{1000, 10000, 90000} {
			path := filepath.Join(dir, fmt.Sprintf("copy-%d.jsonl", n))
			if _, err := os.Stat(path); err != nil {
				writeBenchCopy(b, path, n)
			}
			b.Run(fmt.Sprintf("mode=%s/calls=%d", mode, n), func(b *testing.B) {
				var hwm int64
				for b.Loop() {
					hwm = runCompareChild(b, mode, path, n)
				}
				b.ReportMetric(float64(hwm)/1024, "peak-MiB")
			})
		}
	}
}

// writeBenchCopy writes a copy of n calls at path, line by line.
func writeBenchCopy(tb testing.TB, path string, n int) {
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(f)
	l := &Log{key: testKey, name: testName}
	seq := int64(0)
	put := func(ln Line) {
		body, err := ln.body()
		if err != nil {
			tb.Fatal(err)
		}
		seq++
		enc, err := l.tagLine(body, seq)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := w.Write(enc); err != nil {
			tb.Fatal(err)
		}
	}
	for i := range n {
		call := benchCall(i)
		put(sentLine(call))
		put(receiptLine(call, fp("stub "+call)))
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

// benchCall is the id of call i: 22 characters, like a real call id.
func benchCall(i int) string { return fmt.Sprintf("call-%017d", i) }

const compareChildEnv = "MCPX_COMPARE_BENCH_CHILD"

// TestCompareBenchChild is the child of BenchmarkCompareMemory; without its
// environment it checks that the stream and slice ways agree on a copy.
func TestCompareBenchChild(t *testing.T) {
	mode, path := os.Getenv(compareChildEnv), os.Getenv("MCPX_COPY")
	want, _ := strconv.Atoi(os.Getenv("MCPX_CALLS"))
	if mode == "" {
		path, want = filepath.Join(t.TempDir(), "copy.jsonl"), 50
		writeBenchCopy(t, path, want)
		s, l := compareByMode(t, "stream", path, want), compareByMode(t, "slice", path, want)
		if s.Summary() != l.Summary() || s.MatchCount != want || !s.OK() {
			t.Fatalf("stream %q (%d match), slice %q", s.Summary(), s.MatchCount, l.Summary())
		}
		return
	}
	r := compareByMode(t, mode, path, want)
	if r.Calls != want {
		t.Fatalf("%d calls, want %d", r.Calls, want)
	}
	fmt.Println(peakrss.ChildLine(selfHWM(t)))
}

func compareByMode(t *testing.T, mode, path string, n int) Report {
	if mode == "slice" {
		lines, err := ReadFile(path, testKey, testName)
		if err != nil {
			t.Fatal(err)
		}
		book := BookView{Intact: true}
		_ = benchBook(n)(func(e BookEntry) error { book.Entries = append(book.Entries, e); return nil })
		return Compare(lines, book)
	}
	c, err := CompareLines(FileLines(path, testKey, testName), BookView{Intact: true, Each: benchBook(n)}, CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return c.Report
}

// benchBook hands over a book of n calls' stubs, as writeBenchCopy's copy
// names them, after their slip.
func benchBook(n int) func(func(BookEntry) error) error {
	return func(fn func(BookEntry) error) error {
		slip := fp("slip")
		if err := fn(BookEntry{Line: 1, Kind: EntrySlip, Fingerprint: slip}); err != nil {
			return err
		}
		for i := range n {
			call := benchCall(i)
			e := BookEntry{Line: i + 2, Kind: EntryStub, Fingerprint: fp("stub " + call), With: DefaultService, Slip: slip,
				Details: map[string]string{"provared.arguments": fp("{}"), receipt.LabelCall: fp(call)}}
			if err := fn(e); err != nil {
				return err
			}
		}
		return nil
	}
}

// selfHWM is this process's VmHWM in KiB.
func selfHWM(t *testing.T) int64 {
	n, err := peakrss.Self()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func runCompareChild(b *testing.B, mode, path string, n int) int64 {
	b.Helper()
	cmd := exec.CommandContext(context.Background(), os.Args[0], "-test.run=^TestCompareBenchChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), compareChildEnv+"="+mode, "MCPX_COPY="+path, "MCPX_CALLS="+strconv.Itoa(n))
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("%s %s: %v\n%s", mode, path, err, out)
	}
	kb, err := peakrss.FromChild(out)
	if err != nil {
		b.Fatalf("%v:\n%s", err, out)
	}
	return kb
}
