package book

import (
	"fmt"
	"math/big"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// benchLimits are every kind of limit on the action the benchmarks take,
// each far from being reached.
var benchLimits = map[string]any{
	"limits": []any{
		map[string]any{"action": "tool.a", "max": int64(1) << 50, "unit": "GBP"},
		map[string]any{"action": "tool.a", "each": int64(1000), "unit": "GBP"},
		map[string]any{"action": "tool.a", "count": int64(1) << 40},
		map[string]any{"action": "tool.a", "max": int64(1) << 50, "per": int64(3600), "unit": "GBP"},
		map[string]any{"action": "tool.a", "count": int64(1) << 40, "per": int64(600)},
	},
	"requires": []any{map[string]any{"need": "countersignature"}},
}

// syntheticLedger builds the ledger of a book of n entries: the fixture's
// real slip, then n−1 stubs one second apart. Signing 90,000 stubs with
// ML-DSA would take minutes, so the stubs carry placeholder signatures and
// the reader is told they check: what is measured is the check before
// acting, which never looks at a signature again.
func syntheticLedger(tb testing.TB, f *fixture, n int) (*Ledger, time.Time) {
	return syntheticLedgerOf(tb, f, n, 5)
}

func syntheticLedgerOf(tb testing.TB, f *fixture, n int, value int64) (*Ledger, time.Time) {
	tb.Helper()
	r := newReader(f.opts, false)
	r.verify = func(*jwk.Key, []byte, []byte) bool { return true }
	slipLine, err := f.slipLine().Bytes()
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := r.readLine(slipLine, true); err != nil {
		tb.Fatal(err)
	}
	headers := record.Stub.ProtectedHeaders()
	sig := []any{
		map[string]any{"protected": headers[0], "signature": canon.B64(make([]byte, 64))},
		map[string]any{"protected": headers[1], "signature": canon.B64(make([]byte, 64))},
	}
	when := f.start
	previous := ""
	for seq := int64(0); seq < int64(n-1); seq++ {
		when = when.Add(time.Second)
		c := map[string]any{
			"type": "provared.stub.v0", "id": canon.NewID(), "slip": f.slip.Fingerprint, "seq": seq,
			"action": "tool.a", "amount": map[string]any{"unit": "GBP", "value": value}, "when": canon.FormatTime(when),
		}
		if seq > 0 {
			c["previous"] = previous
		}
		text := canon.MustMarshal(c)
		previous = canon.Fingerprint(text)
		line := canon.MustMarshal(map[string]any{"stub": map[string]any{"payload": canon.B64(text), "signatures": sig}})
		if _, err := r.readLine(line, true); err != nil {
			tb.Fatalf("stub %d: %v", seq, err)
		}
	}
	return newLedger(r), when
}

// BenchmarkCheckBefore: the check before acting per call, at 100 and at
// 90,000 entries. Its cost must not grow with the book.
func BenchmarkCheckBefore(b *testing.B) {
	f := newFixture(b, benchLimits)
	for _, n := range []int{100, 90000} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			l, last := syntheticLedger(b, f, n)
			p := Proposal{Slip: f.slip.Fingerprint, Action: "tool.a", Amount: &record.Amount{Unit: "GBP", Value: 7}, With: "executor",
				Details: []record.Detail{{Name: "provared.arguments", SHA256: "3gPRjiRpMJzRl9-iuwEnEm_T5_PuXb9Da6PuS_VlN00"}}, When: last.Add(time.Second)}
			if d := l.CheckBefore(p); !d.Allowed {
				b.Fatalf("not allowed: %+v", d)
			}
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				l.CheckBefore(p)
			}
			reportCPU(b, cpu)
		})
	}
}

// BenchmarkReserveRelease: a call checked, counted in flight and released.
func BenchmarkReserveRelease(b *testing.B) {
	f := newFixture(b, benchLimits)
	for _, n := range []int{100, 90000} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			l, last := syntheticLedger(b, f, n)
			p := Proposal{Slip: f.slip.Fingerprint, Action: "tool.a", Amount: &record.Amount{Unit: "GBP", Value: 7}, With: "executor", When: last.Add(time.Second)}
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				res, d := l.Reserve(p)
				if res == nil {
					b.Fatalf("not reserved: %+v", d)
				}
				res.Release()
			}
			reportCPU(b, cpu)
		})
	}
}

// processCPU is the CPU time this process has used. The machines these
// benchmarks run on are shared, so beside the wall time per call each
// benchmark reports the CPU time per call ("cpu-ns/op"), which other
// processes do not inflate; it includes the garbage collector's work.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportCPU(b *testing.B, from time.Duration) {
	b.ReportMetric(float64(processCPU()-from)/float64(b.N), "cpu-ns/op")
}

// TestSyntheticLedgerIsSound keeps the benchmarks honest: the book they
// measure is sound and its stubs are counted.
func TestSyntheticLedgerIsSound(t *testing.T) {
	f := newFixture(t, benchLimits)
	l, _ := syntheticLedger(t, f, 300)
	if err := l.Sound(); err != nil {
		t.Fatal(err)
	}
	if c := l.Counts(); c.Stubs != 299 || c.OneSided != 299 {
		t.Fatalf("counts %+v", c)
	}
}

// TestTotalsBeyond64Bits: totals are exact past 2^64: 2,100 stubs of
// 2^53−1 each, under a total and a period limit, give the same words from
// the ledger's running sums as from the reference's way.
func TestTotalsBeyond64Bits(t *testing.T) {
	const most = int64(1)<<53 - 1
	f := newFixture(t, map[string]any{"limits": []any{
		map[string]any{"action": "tool.a", "max": most, "unit": "GBP"},
		map[string]any{"action": "tool.a", "max": most, "per": int64(31622400), "unit": "GBP"},
	}})
	l, last := syntheticLedgerOf(t, f, 2101, most)
	p := Proposal{Slip: f.slip.Fingerprint, Action: "tool.a", Amount: &record.Amount{Unit: "GBP", Value: most}, With: "executor", When: last.Add(time.Second)}
	got := l.CheckBefore(p)
	l.mu.Lock()
	want := l.r.decide(p, &flight{}).Decision // the reference's periods, from every stub afresh
	l.mu.Unlock()
	total := new(big.Int).Mul(big.NewInt(most), big.NewInt(2101))
	if total.IsInt64() {
		t.Fatal("the total fits in 64 bits: the test shows nothing")
	}
	if !slices.Equal(codes(got.Breaches), []string{"over-limit", "over-period-limit"}) {
		t.Fatalf("breaches %v", got.Breaches)
	}
	for i, b := range got.Breaches {
		if !strings.Contains(b.Message, total.String()) || b.Message != want.Breaches[i].Message {
			t.Errorf("breach %d: %q; from scratch %q; want the total %s", i, b.Message, want.Breaches[i].Message, total)
		}
	}
}

// BenchmarkReadStubLine: reading one real stub line (stub and
// countersignature, both hybrid-signed), as opening a book does per line.
func BenchmarkReadStubLine(b *testing.B) {
	f := newFixture(b, benchLimits)
	r := newReader(f.opts, false)
	slipLine, _ := f.slipLine().Bytes()
	if _, err := r.readLine(slipLine, true); err != nil {
		b.Fatal(err)
	}
	lines := make([][]byte, 64)
	for i := range lines {
		p := Proposal{Slip: f.slip.Fingerprint, Action: "tool.a", Amount: &record.Amount{Unit: "GBP", Value: 7}, With: "executor", When: f.start.Add(time.Duration(i) * time.Second)}
		l := lineBytes(b, f.line(b, Position{Seq: int64(i), Previous: f.slip.Fingerprint}, p))
		lines[i] = l[:len(l)-1]
	}
	b.ReportAllocs()
	cpu := processCPU()
	i := 0
	for b.Loop() {
		// The chain is broken after the first: a problem, but every signature is still checked.
		_, _ = r.readLine(lines[i%len(lines)], false)
		i++
	}
	reportCPU(b, cpu)
}
