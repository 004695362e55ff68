package report

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/internal/peakrss"
	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/receipt"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// BenchmarkReportMemory runs `compare` and `report` on books of 1,000,
// 10,000 and 90,000 entries (the slip and a countersigned stub per call,
// lines of their real size: one real signature of each kind copied onto
// every line) and copies holding each call's sent and receipt lines, each
// in a child process (this test binary run again), and reports each
// child's peak RSS (VmHWM). The child does all the command does after the
// book's check (book.VerifyFileEntries, whose memory BenchmarkBookMemory in
// receipts/book measures; with copied signatures it would report every
// line): the copy read line by line, the book's entries read line by
// line, the comparison, and for report the usage counts. The files are
// built once per run under the benchmark's temporary folder (90,000
// entries are about 1.2 GB), or kept in MCPX_REPORT_BENCH_DIR when it is
// set. Run with -benchtime=1x.
func BenchmarkReportMemory(b *testing.B) {
	dir := os.Getenv("MCPX_REPORT_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	fix := newBenchFixture(b, dir)
	for _, n := range []int{1000, 10000, 90000} {
		bookPath, copyPath := fix.files(b, n)
		for _, mode := range []string{"compare", "report"} {
			b.Run(fmt.Sprintf("%s/entries=%d", mode, n), func(b *testing.B) {
				var hwm int64
				for b.Loop() {
					hwm = runReportChild(b, mode, bookPath, copyPath, n)
				}
				b.ReportMetric(float64(hwm)/1024, "peak-MiB")
			})
		}
	}
}

const reportChildEnv = "MCPX_REPORT_BENCH_CHILD"

var benchCopyKey = bytes.Repeat([]byte{7}, copylog.KeySize)

const benchName = "executor"

// TestReportBenchChild is the child of BenchmarkReportMemory; without its
// environment it runs both modes on a small book and copy and checks that
// every call matches.
func TestReportBenchChild(t *testing.T) {
	mode := os.Getenv(reportChildEnv)
	if mode == "" {
		fix := newBenchFixture(t, t.TempDir())
		bookPath, copyPath := fix.files(t, 20)
		for _, m := range []string{"compare", "report"} {
			if summary := reportChild(t, m, bookPath, copyPath); summary != "compare: OK 19 calls, 19 match; copy ok; book intact" {
				t.Fatalf("%s: %s", m, summary)
			}
		}
		return
	}
	want, _ := strconv.Atoi(os.Getenv("MCPX_ENTRIES"))
	summary := reportChild(t, mode, os.Getenv("MCPX_BOOK"), os.Getenv("MCPX_COPY"))
	if wantSummary := fmt.Sprintf("compare: OK %d calls, %d match; copy ok; book intact", want-1, want-1); summary != wantSummary {
		t.Fatalf("%s, want %s", summary, wantSummary)
	}
	fmt.Println(peakrss.ChildLine(selfHWM(t)))
}

// reportChild does what compare (or report) does besides the book's check
// and returns the compare summary.
func reportChild(t testing.TB, mode, bookPath, copyPath string) string {
	in := compareFilesIn{copyPath: copyPath, key: benchCopyKey, name: benchName, bookPath: bookPath, service: "executor",
		readBook: readUnchecked}
	if mode == "report" {
		use, err := usageOfCopy(copyPath, benchCopyKey, benchName)
		if err != nil {
			t.Fatal(err)
		}
		if len(use.Tools) != 1 || use.Tools[0].Allowed == 0 {
			t.Fatalf("usage %+v", use.Tools)
		}
	}
	res, err := compareFiles(in)
	if err != nil {
		t.Fatal(err)
	}
	return res.Report.Summary()
}

// readUnchecked stands in for book.VerifyFileEntries in the benchmark's
// child: it hands over the book's entries as that does and reports the
// book intact without checking it (the benchmark's lines carry copied
// signatures; BenchmarkBookMemory measures the check).
func readUnchecked(path string, _ []string, fn func(book.FileEntry) error) (*book.Report, error) {
	if err := book.ReadFileEntries(path, fn); err != nil {
		return nil, err
	}
	return &book.Report{Intact: true, Problems: []book.LineFinding{}}, nil
}

func runReportChild(b *testing.B, mode, bookPath, copyPath string, n int) int64 {
	b.Helper()
	cmd := exec.CommandContext(context.Background(), os.Args[0], "-test.run=^TestReportBenchChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), reportChildEnv+"="+mode, "MCPX_BOOK="+bookPath, "MCPX_COPY="+copyPath, "MCPX_ENTRIES="+strconv.Itoa(n))
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("%s: %v\n%s", mode, err, out)
	}
	kb, err := peakrss.FromChild(out)
	if err != nil {
		b.Fatalf("%v:\n%s", err, out)
	}
	return kb
}

// selfHWM is this process's VmHWM in KiB.
func selfHWM(t testing.TB) int64 {
	n, err := peakrss.Self()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// benchFixture makes books and copies for the benchmark: a slip and one
// real signature of each kind, copied onto every stub line.
type benchFixture struct {
	dir                   string
	slipLine              []byte
	slipFP                string
	stubSigs, counterSigs any
	start                 time.Time
}

func newBenchFixture(tb testing.TB, dir string) *benchFixture {
	e, err := devsetup.Build(devsetup.Options{Dir: filepath.Join(dir, "setup"), Command: "/bin/true",
		Tools: map[string]devsetup.Tool{"echo": {Action: "provared.data.read"}}})
	if err != nil {
		tb.Fatal(err)
	}
	slipLine, err := book.Line{Slip: e.Slip.Record}.Bytes()
	if err != nil {
		tb.Fatal(err)
	}
	when := canon.FormatTime(time.Now().UTC())
	c := map[string]any{"type": "provared.stub.v0", "id": canon.NewID(), "slip": e.Slip.Fingerprint, "seq": int64(0),
		"action": "provared.data.read", "with": "executor", "when": when,
		"details": []any{map[string]any{"name": receipt.LabelCall, "sha256": canon.Fingerprint([]byte("c"))}}}
	s, err := record.Sign(context.Background(), "stub", c, e.Agent)
	if err != nil {
		tb.Fatal(err)
	}
	cs, err := record.Sign(context.Background(), "countersignature",
		map[string]any{"type": "provared.countersignature.v0", "stub": s.Fingerprint, "when": when}, e.Executor)
	if err != nil {
		tb.Fatal(err)
	}
	return &benchFixture{dir: dir, slipLine: slipLine, slipFP: e.Slip.Fingerprint, start: time.Now().UTC(),
		stubSigs: s.Value()["signatures"], counterSigs: cs.Value()["signatures"]}
}

// files writes a book of n entries and the copy of its n−1 calls.
func (f *benchFixture) files(tb testing.TB, n int) (bookPath, copyPath string) {
	bookPath = filepath.Join(f.dir, fmt.Sprintf("book-%d.jsonl", n))
	copyPath = filepath.Join(f.dir, fmt.Sprintf("copy-%d.jsonl", n))
	if _, err := os.Stat(copyPath); err == nil {
		return bookPath, copyPath // kept from an earlier run (MCPX_REPORT_BENCH_DIR)
	}
	out, err := os.Create(bookPath)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(out)
	if _, err := w.Write(append(f.slipLine, '\n')); err != nil {
		tb.Fatal(err)
	}
	log, err := copylog.Open(copyPath, benchCopyKey, benchName)
	if err != nil {
		tb.Fatal(err)
	}
	var batch []copylog.Line
	when, previous := f.start, ""
	for seq := range int64(n - 1) {
		when = when.Add(time.Second)
		call := fmt.Sprintf("call-%017d", seq)
		c := map[string]any{
			"type": "provared.stub.v0", "id": canon.NewID(), "slip": f.slipFP, "seq": seq, "with": "executor",
			"action": "provared.data.read", "when": canon.FormatTime(when),
			"details": []any{
				map[string]any{"name": "provared.arguments", "sha256": canon.Fingerprint([]byte("{}"))},
				map[string]any{"name": "provared.tool-name", "sha256": canon.Fingerprint([]byte("echo"))},
				map[string]any{"name": receipt.LabelCall, "sha256": canon.Fingerprint([]byte(call))},
				map[string]any{"name": receipt.LabelToolResult, "sha256": canon.Fingerprint([]byte("result " + call))},
			},
		}
		if seq > 0 {
			c["previous"] = previous
		}
		text := canon.MustMarshal(c)
		stubFP := canon.Fingerprint(text)
		previous = stubFP
		cs := canon.MustMarshal(map[string]any{"type": "provared.countersignature.v0", "stub": stubFP, "when": canon.FormatTime(when)})
		line := canon.MustMarshal(map[string]any{
			"stub":             map[string]any{"payload": canon.B64(text), "signatures": f.stubSigs},
			"countersignature": map[string]any{"payload": canon.B64(cs), "signatures": f.counterSigs},
		})
		if _, err := w.Write(append(line, '\n')); err != nil {
			tb.Fatal(err)
		}
		batch = append(batch,
			copylog.Line{Kind: copylog.KindSent, When: when, Call: call, Tool: "echo", Action: "provared.data.read", Slip: f.slipFP,
				RequestID: "provared-1-" + call, Details: []record.Detail{
					{Name: "provared.arguments", SHA256: canon.Fingerprint([]byte("{}"))},
					{Name: "provared.tool-name", SHA256: canon.Fingerprint([]byte("echo"))},
					{Name: receipt.LabelCall, SHA256: canon.Fingerprint([]byte(call))},
				}},
			copylog.Line{Kind: copylog.KindReceipt, When: when.Add(3 * time.Millisecond), Call: call, Stub: stubFP,
				Outcome: &record.Detail{Name: receipt.LabelToolResult, SHA256: canon.Fingerprint([]byte("result " + call))}})
		if len(batch) >= 2000 {
			if err := log.Append(batch...); err != nil {
				tb.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if err := log.Append(batch...); err != nil {
		tb.Fatal(err)
	}
	if err := log.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := out.Close(); err != nil {
		tb.Fatal(err)
	}
	return bookPath, copyPath
}
