package policy

import (
	"sync"
	"time"
)

// Denials allows at most n denials to be written in any hour (a
// sliding window): past it a call is still refused, but no denial is
// written, so that a model that keeps asking cannot fill the book. The
// refusals past it are not written one by one to the copy either: they are
// counted, and one denials-folded line per foldInterval says how many there
// were.
type Denials struct {
	mu    sync.Mutex
	n     int
	times []time.Time // the times of the last n denials written, oldest first

	folded int64       // refusals past the cap not yet written to the copy
	timer  *time.Timer // flushes folded; nil when nothing waits
	write  func(count int64)
	closed bool
}

// foldInterval is how long refusals past the cap are counted before one
// copy line holds their number.
const foldInterval = time.Minute

// NewDenials allows n denials an hour (settings denialsPerHour); write
// records a count of refusals past the cap (a denials-folded copy line).
func NewDenials(n int, write func(count int64)) *Denials {
	return &Denials{n: n, write: write}
}

// Allow reports whether a denial may be written at now, and counts it.
func (l *Denials) Allow(now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n <= 0 {
		return false
	}
	if len(l.times) == l.n {
		if now.Sub(l.times[0]) < time.Hour {
			return false
		}
		l.times = l.times[1:]
	}
	l.times = append(l.times, now)
	return true
}

// Fold counts one refusal past the cap; the count is written within
// foldInterval, or at close.
func (l *Denials) Fold() {
	l.mu.Lock()
	l.folded++
	closed := l.closed
	if l.timer == nil && !closed {
		l.timer = time.AfterFunc(foldInterval, l.flush)
	}
	l.mu.Unlock()
	if closed {
		l.flush()
	}
}

// flush writes the count of refusals folded so far, if any.
func (l *Denials) flush() {
	l.mu.Lock()
	n := l.folded
	l.folded = 0
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	l.mu.Unlock()
	if n > 0 && l.write != nil {
		l.write(n)
	}
}

// Close writes what is still counted; later refusals past the cap are
// written at once.
func (l *Denials) Close() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.flush()
}
