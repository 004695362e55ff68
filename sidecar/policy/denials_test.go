package policy

import (
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// Refusals past the cap are counted and written as one count per interval: a burst within the interval
// is one line, the next burst another, and close writes what is still counted.
func TestDenialLimiterFoldsPerInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var written []int64
		l := NewDenials(1, func(n int64) {
			mu.Lock()
			written = append(written, n)
			mu.Unlock()
		})
		got := func() []int64 {
			synctest.Wait()
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(written)
		}
		for range 5 {
			l.Fold()
		}
		if w := got(); len(w) != 0 {
			t.Fatalf("written before the interval ended: %v", w)
		}
		time.Sleep(foldInterval)
		if w := got(); !slices.Equal(w, []int64{5}) {
			t.Fatalf("after one interval: %v, want [5]", w)
		}
		time.Sleep(10 * foldInterval) // nothing folded: nothing written
		for range 3 {
			l.Fold()
		}
		l.Close()
		if w := got(); !slices.Equal(w, []int64{5, 3}) {
			t.Fatalf("after close: %v, want [5 3]", w)
		}
		l.Fold() // after close: written at once
		if w := got(); !slices.Equal(w, []int64{5, 3, 1}) {
			t.Fatalf("a fold after close: %v, want [5 3 1]", w)
		}
	})
}

func TestDenialLimiterSlidingHour(t *testing.T) {
	l := NewDenials(2, nil)
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	steps := []struct {
		at   time.Duration
		want bool
	}{
		{0, true}, {time.Minute, true}, {2 * time.Minute, false},
		{59 * time.Minute, false}, {60 * time.Minute, true}, {61 * time.Minute, true}, {62 * time.Minute, false},
	}
	for _, s := range steps {
		if got := l.Allow(t0.Add(s.at)); got != s.want {
			t.Errorf("at +%v: allow %v, want %v", s.at, got, s.want)
		}
	}
}
