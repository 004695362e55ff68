package copylog

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// TestConcurrentAppend has 16 goroutines append calls of three lines each
// at once. Every call's lines must end up adjacent, in order, numbered with
// no gap, and the file must verify; fewer writes than calls shows group
// commit. Run it with -race.
func TestConcurrentAppend(t *testing.T) {
	const workers, perWorker = 16, 8
	path := tempCopy(t)
	l := mustOpen(t, path)
	var writes atomic.Int64
	realWrite := l.writeFile
	l.writeFile = func(b []byte) (int, error) { // counts the real writes
		writes.Add(1)
		return realWrite(b)
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers*perWorker)
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				call := fmt.Sprintf("w%d-c%d", w, i)
				if err := l.Append(sentLine(call), notWrittenLine(call), lateReceiptLine(call, fp(call))); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	lines, err := ReadFile(path, testKey, testName)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 3*workers*perWorker {
		t.Fatalf("%d lines, want %d", len(lines), 3*workers*perWorker)
	}
	for i := 0; i < len(lines); i += 3 {
		a, b, c := lines[i], lines[i+1], lines[i+2]
		if a.Kind != KindSent || b.Kind != KindNotWritten || c.Kind != KindLateReceipt || a.Call != b.Call || b.Call != c.Call {
			t.Fatalf("lines %d-%d are not one call's lines in order: %s %s, %s %s, %s %s", i+1, i+3, a.Kind, a.Call, b.Kind, b.Call, c.Kind, c.Call)
		}
	}
	calls := int64(workers * perWorker)
	t.Logf("%d calls written with %d writes", calls, writes.Load())
	if writes.Load() > calls {
		t.Errorf("%d writes for %d calls", writes.Load(), calls)
	}
}

// TestAppendDuringClose shows that Close waits for the write in progress
// and that no Append is lost or half-written.
func TestAppendDuringClose(t *testing.T) {
	path := tempCopy(t)
	l := mustOpen(t, path)
	var wg sync.WaitGroup
	var ok atomic.Int64
	for i := range 8 {
		wg.Go(func() {
			if l.Append(withdrawnLine(fmt.Sprint("c", i))) == nil {
				ok.Add(1)
			}
		})
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	lines, err := ReadFile(path, testKey, testName)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(lines)) != ok.Load() {
		t.Errorf("%d Appends succeeded, the copy holds %d lines", ok.Load(), len(lines))
	}
}
