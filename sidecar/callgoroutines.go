package sidecar

import (
	"sync/atomic"
	"time"
)

// callGoroutines runs each sent call's work (send, then its stub: see
// startSending) on a goroutine that has run calls before, when one is
// idle, and on a new one otherwise. A call's goroutine signs its stub
// (ML-DSA-87 wants a deep stack), so a new goroutine for every call grew a
// small stack to that depth, copying it at each doubling, call after call;
// a goroutine that stays keeps its grown stack from one call to the next.
// A call never waits for a goroutine: the work goes to an idle one or to a
// new one at once, so calls that wait on one another (the send order, the
// scribe's order) can never wait on a goroutine held by a call after
// them. A goroutine idle for callGoroutineIdle ends.
var callGoroutines = newGoroutinePool()

func newGoroutinePool() *goroutinePool { return &goroutinePool{idle: make(chan func())} }

// callGoroutineIdle is how long a call's goroutine waits for the next call
// before it ends.
const callGoroutineIdle = 2 * time.Second

// goroutinePool hands work to an idle goroutine of its own, or starts one.
type goroutinePool struct {
	idle    chan func() // unbuffered: a send succeeds only into an idle goroutine's hands
	started atomic.Int64
}

// run runs f on an idle goroutine of p, or on a new one; it never waits.
func (p *goroutinePool) run(f func()) {
	select {
	case p.idle <- f:
	default:
		p.started.Add(1)
		go p.serve(f)
	}
}

// serve runs f, then whatever p hands it, until it has been idle for
// callGoroutineIdle.
func (p *goroutinePool) serve(f func()) {
	t := time.NewTimer(callGoroutineIdle)
	defer t.Stop()
	for {
		f()
		f = nil // let go of the call's work while idle
		t.Reset(callGoroutineIdle)
		select {
		case f = <-p.idle:
		case <-t.C:
			return
		}
	}
}
