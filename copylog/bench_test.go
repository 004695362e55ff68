package copylog

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// BenchmarkAppend measures one call's two lines (sent, then receipt as a
// second Append) on the real disk of t.TempDir, with 1 and with 16 callers
// appending at once. "appends/write" shows group commit: with 16 callers one
// write and one fdatasync carry several calls' lines.
func BenchmarkAppend(b *testing.B) {
	for _, callers := range []int{1, 16} {
		b.Run(fmt.Sprintf("callers=%d", callers), func(b *testing.B) {
			l, err := Open(tempCopyB(b), testKey, testName)
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			var writes atomic.Int64
			realWrite := l.writeFile
			l.writeFile = func(p []byte) (int, error) { writes.Add(1); return realWrite(p) }
			var next atomic.Int64
			b.ResetTimer()
			var wg sync.WaitGroup
			for range callers {
				wg.Go(func() {
					for {
						n := next.Add(1)
						if n > int64(b.N) {
							return
						}
						call := fmt.Sprint("call-", n)
						if err := l.Append(sentLine(call)); err != nil {
							b.Error(err)
							return
						}
						if err := l.Append(receiptLine(call, fp(call))); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64(2*b.N)/float64(writes.Load()), "appends/write")
		})
	}
}

func tempCopyB(b *testing.B) string { return b.TempDir() + "/copy.jsonl" }
