package sidecar_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/internal/peakrss"
)

// startBenchCalls is how many calls BenchmarkStartFullBook makes before it
// measures: with the slip, a book of 90,000 entries. MCPX_START_BENCH_CALLS
// sets another number (for a quick look).
func startBenchCalls(b *testing.B) int {
	if v := os.Getenv("MCPX_START_BENCH_CALLS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("MCPX_START_BENCH_CALLS=%q: a whole number of calls, at least 1", v)
		}
		return n
	}
	return 89_999
}

// BenchmarkStartFullBook: the real executor started again on the book and
// copy it wrote through 89,999 real calls (made first, 16 in flight, about
// a minute on 2 cores), from the checkpoint its last stop wrote. Each
// round reports the time from the process's start to the first call's
// answer (first-answer-ms: the settings, keys and slip read, the book and
// the copy opened from their checkpoints and checked, the tool server started, the MCP handshake,
// one call) and the process's peak resident set (peak-MiB). Issue 17 asks
// at most 2 s and 64 MiB. Run with -benchtime=3x.
func BenchmarkStartFullBook(b *testing.B) {
	calls := startBenchCalls(b)
	ctx := context.Background()
	h := startWith(b, "sdk", baseOptions())
	cs := h.client(ctx)
	perCall(b, cs, calls, 16)
	cs.Close()
	if code := h.stop(); code != 0 {
		b.Fatalf("the executor that made the book exited %d:\n%s", code, h.stderr.String())
	}
	var first, peak []float64
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		again := launch(b, h.env)
		cs := again.client(ctx)
		res, err := cs.CallTool(ctx, benchParams)
		took := time.Since(start)
		if err != nil || res.IsError {
			b.Fatalf("the first call after the start: %v %+v", err, res)
		}
		kb, err := peakrss.OfPID(again.pid)
		if err != nil {
			b.Fatal(err)
		}
		cs.Close()
		if code := again.stop(); code != 0 {
			b.Fatalf("the executor exited %d:\n%s", code, again.stderr.String())
		}
		for _, used := range []string{"book opened from its checkpoint", "copy opened from its checkpoint"} {
			if !strings.Contains(again.stderr.String(), used) {
				b.Fatalf("the start did not use the checkpoint (%q not logged):\n%s", used, again.stderr.String())
			}
		}
		first = append(first, ms(took))
		peak = append(peak, float64(kb)/1024)
	}
	b.StopTimer()
	b.ReportMetric(median(first), "first-answer-ms")
	b.ReportMetric(median(peak), "peak-MiB")
	b.ReportMetric(float64(calls+1), "entries")
}
