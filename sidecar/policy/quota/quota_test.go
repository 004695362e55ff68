package quota

import (
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// call reserves and commits one call, returning the refusal text or "".
func call(t *testing.T, tr *Tracker, tool string, l Limits) string {
	t.Helper()
	r, err := tr.Reserve(tool, l)
	if err != nil {
		var ex *ExceededError
		if !errors.As(err, &ex) {
			t.Fatalf("Reserve: %v is not an *ExceededError", err)
		}
		return err.Error()
	}
	r.Commit()
	return ""
}

func TestWindows(t *testing.T) {
	type step struct {
		sleep time.Duration // before the call
		want  string        // "" for allowed
	}
	const tool = "fs.search_files"
	for _, tc := range []struct {
		name  string
		l     Limits
		steps []step
	}{
		{"per minute, the fourth refused with the oldest's retry", Limits{PerMinute: 3}, []step{
			{0, ""}, {10 * time.Second, ""}, {9 * time.Second, ""},
			{0, "quota fs.search_files: 3 per minute used; retry after 41s"},
			{40 * time.Second, "quota fs.search_files: 3 per minute used; retry after 1s"},
			{1 * time.Second, ""}, // the first left exactly at 60s
			{0, "quota fs.search_files: 3 per minute used; retry after 10s"},
		}},
		{"retry rounds up to a whole second", Limits{PerMinute: 1}, []step{
			{0, ""}, {59*time.Second + 500*time.Millisecond, "quota fs.search_files: 1 per minute used; retry after 1s"},
			{499 * time.Millisecond, "quota fs.search_files: 1 per minute used; retry after 1s"},
			{1 * time.Millisecond, ""},
		}},
		{"per hour slides", Limits{PerHour: 2}, []step{
			{0, ""}, {30 * time.Minute, ""},
			{29 * time.Minute, "quota fs.search_files: 2 per hour used; retry after 1m0s"},
			{time.Minute, ""},
			{0, "quota fs.search_files: 2 per hour used; retry after 30m0s"},
		}},
		{"per day", Limits{PerDay: 1}, []step{
			{0, ""}, {23 * time.Hour, "quota fs.search_files: 1 per day used; retry after 1h0m0s"}, {time.Hour, ""},
		}},
		{"per run never frees", Limits{PerRun: 2}, []step{
			{0, ""}, {0, ""},
			{0, "quota fs.search_files: 2 per run used; no more calls until the executor restarts"},
			{48 * time.Hour, "quota fs.search_files: 2 per run used; no more calls until the executor restarts"},
		}},
		{"per run named before a window", Limits{PerRun: 1, PerMinute: 1}, []step{
			{0, ""}, {0, "quota fs.search_files: 1 per run used; no more calls until the executor restarts"},
		}},
		{"of two full windows, the one that frees last", Limits{PerMinute: 2, PerHour: 3}, []step{
			{0, ""}, {0, ""},
			{0, "quota fs.search_files: 2 per minute used; retry after 1m0s"},
			{time.Minute, ""},
			{0, "quota fs.search_files: 3 per hour used; retry after 59m0s"},
		}},
		{"no quota", Limits{}, []step{{0, ""}, {0, ""}, {0, ""}, {0, ""}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := NewTracker()
				for i, s := range tc.steps {
					time.Sleep(s.sleep)
					if got := call(t, tr, tool, tc.l); got != s.want {
						t.Fatalf("step %d: got %q, want %q", i, got, s.want)
					}
				}
			})
		})
	}
}

func TestRestore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		now := time.Now()
		tr := NewTracker()
		// From the copy, out of order, one too old to matter.
		tr.Restore("fs.search_files", []time.Time{now.Add(-30 * time.Second), now.Add(-25 * time.Hour), now.Add(-50 * time.Second), now.Add(-40 * time.Second)})
		l := Limits{PerMinute: 3, PerRun: 1}
		if got := call(t, tr, "fs.search_files", l); got != "quota fs.search_files: 3 per minute used; retry after 10s" {
			t.Fatalf("after restore: %q", got)
		}
		if u := tr.Usage("fs.search_files"); u != (Usage{Run: 0, Minute: 3, Hour: 3, Day: 3}) {
			t.Fatalf("usage %+v", u)
		}
		time.Sleep(10 * time.Second)
		// Restored calls do not count towards the run.
		if got := call(t, tr, "fs.search_files", l); got != "" {
			t.Fatalf("after the window: %q", got)
		}
		if got := call(t, tr, "fs.search_files", Limits{PerRun: 1}); got != "quota fs.search_files: 1 per run used; no more calls until the executor restarts" {
			t.Fatalf("run: %q", got)
		}
		// Other tools are counted apart.
		if got := call(t, tr, "fs.read_file", l); got != "" {
			t.Fatalf("other tool: %q", got)
		}
	})
}

func TestReserveCommitRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := NewTracker()
		l := Limits{PerMinute: 2, PerRun: 5}
		a, err := tr.Reserve("t", l)
		if err != nil {
			t.Fatal(err)
		}
		b, err := tr.Reserve("t", l)
		if err != nil {
			t.Fatal(err)
		}
		// Two pending fill the window; a pending call frees no earlier than a full window.
		if _, err := tr.Reserve("t", l); err == nil || err.Error() != "quota t: 2 per minute used; retry after 1m0s" {
			t.Fatalf("third while two pending: %v", err)
		}
		if u := tr.Usage("t"); u != (Usage{Run: 2, Minute: 2, Hour: 2, Day: 2, Pending: 2}) {
			t.Fatalf("usage %+v", u)
		}
		b.Release()
		b.Release()
		b.Commit() // after Release: nothing
		time.Sleep(20 * time.Second)
		a.Commit()
		a.Commit()
		a.Release() // after Commit: nothing
		if u := tr.Usage("t"); u != (Usage{Run: 1, Minute: 1, Hour: 1, Day: 1}) {
			t.Fatalf("usage after commit and release %+v", u)
		}
		time.Sleep(10 * time.Second)
		c, err := tr.Reserve("t", l)
		if err != nil {
			t.Fatalf("after a release: %v", err)
		}
		c.Commit()
		time.Sleep(30 * time.Second)
		// a was recorded when committed (at 20s), not when reserved (at 0s).
		if _, err := tr.Reserve("t", l); err == nil || err.Error() != "quota t: 2 per minute used; retry after 20s" {
			t.Fatalf("retry from the commit time: %v", err)
		}
	})
}

func TestConcurrentReserve(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := NewTracker()
		l := Limits{PerMinute: 3}
		var wg sync.WaitGroup
		var mu sync.Mutex
		var got []*Reservation
		refused := 0
		for range 50 {
			wg.Go(func() {
				r, err := tr.Reserve("t", l)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					refused++
					return
				}
				got = append(got, r)
			})
		}
		wg.Wait()
		if len(got) != 3 || refused != 47 {
			t.Fatalf("%d reserved, %d refused; want 3 and 47", len(got), refused)
		}
		for _, r := range got {
			wg.Go(r.Release)
		}
		wg.Wait()
		if u := tr.Usage("t"); u != (Usage{}) {
			t.Fatalf("after releasing all: %+v", u)
		}
	})
}

func TestLimitsNone(t *testing.T) {
	if !(Limits{}).None() || (Limits{PerDay: 1}).None() {
		t.Fatal("None")
	}
}
