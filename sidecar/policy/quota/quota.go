// Package quota counts tool calls against per-tool quotas: so many per run
// (per executor process) and so many in any minute, hour or day.
//
// # Windows
//
// The minute, hour and day windows slide: a call made at t counts in the
// window of length w until t+w, and leaves it exactly then. They survive a
// restart: [Tracker.Restore] takes the times of past calls (which the caller
// reads from the copy at start). The run count starts at zero in each
// process and restored calls do not count towards it.
//
// # Reserve, commit, release
//
// A call takes a [Reservation] as soon as its rule allows it and before the
// later steps of the pipeline (content rules, the check before acting, a
// person's approval). While reserved it counts against every quota, so calls
// in flight together cannot overrun one. [Reservation.Commit] records the
// call at the time of the commit (it is being sent); [Reservation.Release]
// forgets it (it was refused later and must not count). The first of the two
// wins; any further call of either does nothing.
//
// A quota belongs to a tool name, not to a rule: with a glob rule "fs.*"
// holding a quota, fs.read_file and fs.write_file are counted apart, each
// against the rule's numbers.
package quota

import (
	"fmt"
	"slices"
	"sync"
	"time"
)

// Limits are a tool's quotas; 0 means no quota of that kind.
type Limits struct {
	PerRun    int
	PerMinute int
	PerHour   int
	PerDay    int
}

// None reports whether no quota is set.
func (l Limits) None() bool { return l == Limits{} }

// Day is the longest window, a day of 24 hours (the others are time.Minute and time.Hour).
const Day = 24 * time.Hour

// ExceededError is a call refused by a quota. Its text is written for the
// model: "quota fs.search_files: 3 per minute used; retry after 41s".
type ExceededError struct {
	Tool  string
	Limit int
	// Per is "run", "minute", "hour" or "day".
	Per string
	// RetryAfter is how long until the window has room again, rounded up
	// to a whole second; 0 for a per-run quota (no room until a restart).
	RetryAfter time.Duration
}

func (e *ExceededError) Error() string {
	if e.Per == "run" {
		return fmt.Sprintf("quota %s: %d per run used; no more calls until the executor restarts", e.Tool, e.Limit)
	}
	return fmt.Sprintf("quota %s: %d per %s used; retry after %s", e.Tool, e.Limit, e.Per, e.RetryAfter)
}

// Tracker holds the calls of every tool. It is safe for concurrent use.
type Tracker struct {
	mu    sync.Mutex
	tools map[string]*counter
}

type counter struct {
	run     int         // calls committed in this process
	pending int         // reservations neither committed nor released
	times   []time.Time // committed and restored calls, oldest first, none older than a Day
}

// NewTracker returns an empty tracker.
func NewTracker() *Tracker { return &Tracker{tools: make(map[string]*counter)} }

func (t *Tracker) counter(tool string) *counter {
	c := t.tools[tool]
	if c == nil {
		c = &counter{}
		t.tools[tool] = c
	}
	return c
}

// Restore adds the times of past calls of tool, in any order (those older
// than a day are of no use and dropped). They count in the windows, not
// towards the run.
func (t *Tracker) Restore(tool string, times []time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.counter(tool)
	c.times = append(c.times, times...)
	slices.SortFunc(c.times, func(a, b time.Time) int { return a.Compare(b) })
	c.prune(time.Now())
}

func (c *counter) prune(now time.Time) {
	cut := now.Add(-Day)
	i := 0
	for i < len(c.times) && !c.times[i].After(cut) {
		i++
	}
	if i > 0 {
		c.times = slices.Delete(c.times, 0, i)
	}
}

// inWindow is the calls made in (now-w, now] (later ones count too: a clock
// that went back must not free room), oldest first.
func (c *counter) inWindow(now time.Time, w time.Duration) []time.Time {
	cut := now.Add(-w)
	i, _ := slices.BinarySearchFunc(c.times, cut, func(a, b time.Time) int {
		if !a.After(b) {
			return -1
		}
		return 1
	})
	return c.times[i:]
}

// Reserve counts one call of tool against l. It returns a reservation to
// commit or release, or an *ExceededError naming the quota that is full (of
// several, the one that frees last). With no quota in l it still returns a
// reservation, so callers need not tell the cases apart.
func (t *Tracker) Reserve(tool string, l Limits) (*Reservation, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.counter(tool)
	now := time.Now()
	c.prune(now)
	if l.PerRun > 0 && c.run+c.pending >= l.PerRun {
		return nil, &ExceededError{Tool: tool, Limit: l.PerRun, Per: "run"}
	}
	var worst *ExceededError
	for _, q := range []struct {
		limit int
		per   string
		w     time.Duration
	}{{l.PerMinute, "minute", time.Minute}, {l.PerHour, "hour", time.Hour}, {l.PerDay, "day", Day}} {
		if q.limit <= 0 {
			continue
		}
		in := c.inWindow(now, q.w)
		used := len(in) + c.pending
		if used < q.limit {
			continue
		}
		// Room comes back when used-limit+1 of the oldest have left. A
		// pending call will be recorded no earlier than now.
		k := used - q.limit
		at := now
		if k < len(in) {
			at = in[k]
		}
		retry := max(at.Add(q.w).Sub(now), 0)
		retry = (retry + time.Second - 1).Truncate(time.Second)
		if worst == nil || retry > worst.RetryAfter {
			worst = &ExceededError{Tool: tool, Limit: q.limit, Per: q.per, RetryAfter: retry}
		}
	}
	if worst != nil {
		return nil, worst
	}
	c.pending++
	return &Reservation{t: t, c: c}, nil
}

// Usage is how many calls of a tool count now: in this run (committed and
// pending) and in each window (with pending ones).
type Usage struct {
	Run, Minute, Hour, Day, Pending int
}

// Usage reports the current counts for tool.
func (t *Tracker) Usage(tool string) Usage {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.tools[tool]
	if c == nil {
		return Usage{}
	}
	now := time.Now()
	c.prune(now)
	return Usage{
		Run:     c.run + c.pending,
		Minute:  len(c.inWindow(now, time.Minute)) + c.pending,
		Hour:    len(c.inWindow(now, time.Hour)) + c.pending,
		Day:     len(c.inWindow(now, Day)) + c.pending,
		Pending: c.pending,
	}
}

// Reservation is one call counted but not yet made.
type Reservation struct {
	t    *Tracker
	c    *counter
	done bool
}

// Commit records the call as made now. It does nothing after a Commit or
// Release.
func (r *Reservation) Commit() {
	r.t.mu.Lock()
	defer r.t.mu.Unlock()
	if !r.endLocked() {
		return
	}
	r.c.run++
	now := time.Now()
	// Keep the times in order even if the clock went back.
	i := len(r.c.times)
	for i > 0 && r.c.times[i-1].After(now) {
		i--
	}
	r.c.times = slices.Insert(r.c.times, i, now)
}

// Release forgets the call: it was refused later and does not count. It
// does nothing after a Commit or Release.
func (r *Reservation) Release() {
	r.t.mu.Lock()
	defer r.t.mu.Unlock()
	r.endLocked()
}

// endLocked takes the call out of the pending ones; false when it was
// committed or released already. Called with the tracker's lock held.
func (r *Reservation) endLocked() bool {
	if r.done {
		return false
	}
	r.done = true
	r.c.pending--
	return true
}
