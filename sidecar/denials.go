package sidecar

import (
	"sync"
	"time"
)

// denialLimiter allows at most n denials to be written in any hour (a
// sliding window): past it a call is still refused, but no denial is
// written, so that a model that keeps asking cannot fill the book.
type denialLimiter struct {
	mu    sync.Mutex
	n     int
	times []time.Time // the times of the last n denials written, oldest first
}

func newDenialLimiter(n int) *denialLimiter { return &denialLimiter{n: n} }

// allow reports whether a denial may be written at now, and counts it.
func (l *denialLimiter) allow(now time.Time) bool {
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
