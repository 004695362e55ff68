package book

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/internal/peakrss"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
)

// The memory benchmarks read books of 1,000, 10,000 and 90,000 entries in
// child processes (this test binary run again) and report each child's
// peak RSS (VmHWM) and time. Signing 90,000 stubs and countersignatures
// with ML-DSA-87 would take many minutes, so the books are built once into
// a cache folder outside the repository (MCPX_BENCH_CACHE, else
// ~/.cache/mcp-executor-bench), with one real signature of each kind
// copied onto every line: the lines have their real sizes, and in the
// child every signature is checked for real against its key (so the time
// is the real time) while the answer is taken as valid.

const benchChildEnv = "MCPX_BOOK_BENCH_CHILD"

func benchCache(tb testing.TB) string {
	dir := os.Getenv("MCPX_BENCH_CACHE")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			tb.Fatal(err)
		}
		dir = filepath.Join(home, ".cache", "mcp-executor-bench")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// benchBook returns the path of a cached book of n entries (the slip and
// n−1 countersigned stubs, each naming a call), building it if missing.
func benchBook(tb testing.TB, f *fixture, n int) string {
	path := filepath.Join(benchCache(tb), fmt.Sprintf("book-%d.jsonl", n))
	if _, err := os.Stat(path); err == nil {
		return path
	}
	tmp := path + ".tmp"
	out, err := os.Create(tmp)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(out)
	slipLine, err := f.slipLine().Bytes()
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := w.Write(append(slipLine, '\n')); err != nil {
		tb.Fatal(err)
	}
	// One real signature of each kind, copied onto every line.
	signed := f.line(tb, Position{}, Proposal{Slip: f.slip.Fingerprint, Action: "tool.a", With: "executor", When: f.start})
	stubSigs := signed.Stub.Value()["signatures"]
	counterSigs := signed.Countersignature.Value()["signatures"]
	when, previous := f.start, ""
	for seq := int64(0); seq < int64(n-1); seq++ {
		when = when.Add(time.Second)
		call := fmt.Sprintf("call-%d", seq)
		c := map[string]any{
			"type": "provared.stub.v0", "id": canon.NewID(), "slip": f.slip.Fingerprint, "seq": seq, "with": "executor",
			"action": "tool.a", "when": canon.FormatTime(when),
			"details": []any{map[string]any{"name": "executor.call", "sha256": canon.Fingerprint([]byte(call))}},
		}
		if seq > 0 {
			c["previous"] = previous
		}
		text := canon.MustMarshal(c)
		previous = canon.Fingerprint(text)
		cs := canon.MustMarshal(map[string]any{"type": "provared.countersignature.v0", "stub": previous, "when": canon.FormatTime(when)})
		line := canon.MustMarshal(map[string]any{
			"stub":             map[string]any{"payload": canon.B64(text), "signatures": stubSigs},
			"countersignature": map[string]any{"payload": canon.B64(cs), "signatures": counterSigs},
		})
		if _, err := w.Write(append(line, '\n')); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := out.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		tb.Fatal(err)
	}
	return path
}

// peakRSS is this process's VmHWM in KiB, -1 when it cannot be read.
func peakRSS() int64 {
	n, err := peakrss.Self()
	if err != nil {
		return -1
	}
	return n
}

// TestBookBenchChild is the child of BenchmarkBookMemory; without its
// environment it checks only that peakRSS reads a number.
func TestBookBenchChild(t *testing.T) {
	mode := os.Getenv(benchChildEnv)
	if mode == "" {
		if peakRSS() <= 0 {
			t.Fatal("VmHWM not read from /proc/self/status")
		}
		return
	}
	checkSignature = func(k *jwk.Key, input, sig []byte) bool { _ = k.Verify(input, sig); return true }
	path := os.Getenv("MCPX_BOOK")
	trust := bookTrust(t, path, "")
	cpPath := path + ".checkpoint"
	key := bytes.Repeat([]byte{9}, 32)
	opts := Options{IssuerKeys: []string{trust}}
	start, cpu := time.Now(), processCPU()
	var note string
	switch mode {
	case "open", "open-checkpoint":
		if mode == "open-checkpoint" {
			data, err := os.ReadFile(cpPath)
			if err != nil {
				t.Fatal(err)
			}
			cp, err := OpenCheckpoint(data, key)
			if err != nil {
				t.Fatal(err)
			}
			opts.Checkpoint = &cp
		}
		b, err := OpenBook(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Ledger().Sound(); err != nil {
			t.Fatal(err)
		}
		note = b.CheckpointUse()
		if os.Getenv("MCPX_HEAP") != "" {
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			fmt.Fprintf(os.Stderr, "live heap %d KiB, sys %d KiB, gc %d\n", ms.HeapAlloc/1024, ms.Sys/1024, ms.NumGC)
		}
		if mode == "open" {
			cp, ok := b.Checkpoint()
			if !ok {
				t.Fatal("no checkpoint")
			}
			data, err := cp.Seal(key)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(cpPath, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		b.Close()
	case "verify-floor":
		jobs, total := floorJobs(t, path)
		start, cpu = time.Now(), processCPU()
		verifyAll(jobs, total)
	case "verify":
		rep, err := VerifyFile(path, opts.IssuerKeys)
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Intact {
			t.Fatalf("not intact: %+v", rep.Problems[:min(3, len(rep.Problems))])
		}
	}
	fmt.Printf("BENCH hwm_kb=%d ms=%d cpu_ms=%d use=%q\n", peakRSS(), time.Since(start).Milliseconds(), (processCPU() - cpu).Milliseconds(), note)
}

// floorJobs reads the signatures of the book's first stub lines (at most
// 512 of them, each stub and countersignature with the key that signed
// it) and counts the signatures of the whole book, for the verify floor.
func floorJobs(t *testing.T, path string) (jobs []verifyJob, total int) {
	var agent, service jwk.KeySet
	err := ReadFileEntries(path, func(e FileEntry) error {
		if e.Kind == KindSlip {
			sl, err := slip.Parse(e.Content)
			if err != nil {
				return err
			}
			agent, service = sl.Agent.Keys, *sl.With[0].Keys
			return nil
		}
		total += 4
		if len(jobs) >= 4*512 {
			return nil
		}
		for i := range e.Record.Signatures {
			sig, _ := e.Record.Signatures[i].Bytes()
			jobs = append(jobs, verifyJob{agent.Key(e.Record.Signatures[i].Alg), e.Record.SigningInput(i), sig})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The countersignatures: read the lines again for their records.
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	sc := newLineScanner(fh)
	var buf []byte
	for n := 0; n < 513; n++ {
		line, _, err := sc.next(buf)
		buf = line
		if err != nil {
			break
		}
		v, err := canon.Parse(line)
		if err != nil {
			t.Fatal(err)
		}
		cs, ok := v.(map[string]any)["countersignature"]
		if !ok {
			continue
		}
		rec, err := record.Parse(cs, record.Countersignature)
		if err != nil {
			t.Fatal(err)
		}
		for i := range rec.Signatures {
			sig, _ := rec.Signatures[i].Bytes()
			jobs = append(jobs, verifyJob{service.Key(rec.Signatures[i].Alg), rec.SigningInput(i), sig})
		}
	}
	return jobs, total
}

// verifyAll checks total signatures, cycling through jobs, in a pool of
// GOMAXPROCS goroutines: the all-cores verify floor.
func verifyAll(jobs []verifyJob, total int) {
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < total; i += workers {
				j := jobs[i%len(jobs)]
				_ = j.key.Verify(j.input, j.sig)
			}
		})
	}
	wg.Wait()
}

// runBenchChildCPU runs the benchmark's child on the book at path and
// returns its peak RSS, wall time and CPU time.
func runBenchChildCPU(b *testing.B, mode, path string) (hwmKB, ms, cpuMS int64) {
	b.Helper()
	cmd := exec.CommandContext(context.Background(), os.Args[0], "-test.run=^TestBookBenchChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), benchChildEnv+"="+mode, "MCPX_BOOK="+path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("%s %s: %v\n%s", mode, path, err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(l, "BENCH "); ok {
			var use string
			if _, err := fmt.Sscanf(rest, "hwm_kb=%d ms=%d cpu_ms=%d use=%q", &hwmKB, &ms, &cpuMS, &use); err != nil {
				b.Fatalf("reading %q: %v", rest, err)
			}
			if mode == "open-checkpoint" && use != "used" {
				b.Fatalf("the checkpoint was not used: %q", use)
			}
			return hwmKB, ms, cpuMS
		}
	}
	b.Fatalf("no figures from the child:\n%s", out)
	return 0, 0, 0
}

// BenchmarkBookMemory: peak RSS and time of opening a book at start (with
// and without a checkpoint) and of verify, at 1,000, 10,000 and 90,000
// entries, each in a process of its own. Run with -benchtime=1x.
func BenchmarkBookMemory(b *testing.B) {
	f := newFixture(b, nil)
	for _, n := range []int{1000, 10000, 90000} {
		path := benchBook(b, f, n)
		for _, mode := range []string{"open", "open-checkpoint", "verify"} {
			b.Run(fmt.Sprintf("%s/entries=%d", mode, n), func(b *testing.B) {
				var hwm, ms, cpu int64
				for b.Loop() {
					hwm, ms, cpu = runBenchChildCPU(b, mode, path)
				}
				b.ReportMetric(float64(hwm)/1024, "MiB-peak")
				b.ReportMetric(float64(ms), "ms-child")
				b.ReportMetric(float64(cpu), "cpu-ms-child")
			})
		}
	}
}

// BenchmarkBookVerify: verify of a book of 10,000 and 90,000 entries
// against its floor, the same number of signatures (real ones, taken from
// the book) checked in a pool of GOMAXPROCS goroutines and nothing else,
// each in a child process of its own, floor and verify in turn in every
// round. Reports verify-x-floor (the ratio of the summed times), the
// floor's time, the ratio of their CPU times (cpu-x-floor, which other
// processes on a shared machine do not inflate) and the peak RSS of
// verify. Run with -benchtime=1x and
// -count=5; take the median.
func BenchmarkBookVerify(b *testing.B) {
	f := newFixture(b, nil)
	for _, n := range []int{10000, 90000} {
		path := benchBook(b, f, n)
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			var floorMS, verifyMS, floorCPU, verifyCPU, hwm int64
			for b.Loop() {
				_, fms, fcpu := runBenchChildCPU(b, "verify-floor", path)
				h, vms, vcpu := runBenchChildCPU(b, "verify", path)
				floorMS, verifyMS, hwm = floorMS+fms, verifyMS+vms, max(hwm, h)
				floorCPU, verifyCPU = floorCPU+fcpu, verifyCPU+vcpu
			}
			b.ReportMetric(float64(verifyMS)/float64(floorMS), "verify-x-floor")
			b.ReportMetric(float64(verifyCPU)/float64(floorCPU), "cpu-x-floor")
			b.ReportMetric(float64(floorMS)/float64(b.N), "floor-ms")
			b.ReportMetric(float64(hwm)/1024, "MiB-peak")
		})
	}
}

// bookTrust is the thumbprint of the passkey that signed the book's slip
// (the fixture's passkey is made afresh each run; a cached book's slip
// names the one it was built with).
func bookTrust(tb testing.TB, path, fallback string) string {
	fh, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer fh.Close()
	line, err := bufio.NewReaderSize(fh, 1<<20).ReadBytes('\n')
	if err != nil {
		tb.Fatal(err)
	}
	e, ok := fileEntry(bytes.TrimSuffix(line, []byte("\n")))
	if !ok {
		return fallback
	}
	sl, err := slip.Parse(e.Content)
	if err != nil {
		tb.Fatal(err)
	}
	return sl.Issuer.Key.Thumbprint
}
