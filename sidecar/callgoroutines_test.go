package sidecar

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestGoroutinePoolNeverWaits: work that waits on work handed over after
// it (as a call waits on the call before it in the send order, the other
// way round here) gets a goroutine of its own at once, however many are
// busy: the pool never makes work wait for a goroutine.
func TestGoroutinePoolNeverWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newGoroutinePool()
		const n = 50
		gates := make([]chan struct{}, n+1)
		for i := range gates {
			gates[i] = make(chan struct{})
		}
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			p.run(func() {
				defer wg.Done()
				<-gates[i+1] // opened by the work handed over after this one
				close(gates[i])
			})
		}
		close(gates[n])
		wg.Wait()
		if p.started.Load() != n {
			t.Fatalf("%d goroutines for %d pieces of work all busy at once", p.started.Load(), n)
		}
		time.Sleep(callGoroutineIdle + time.Second) // the idle goroutines end
	})
}

// TestGoroutinePoolKeepsIdleOnes: work handed over while a goroutine is
// idle runs on it; a goroutine idle for callGoroutineIdle ends, and the
// next work starts a new one.
func TestGoroutinePoolKeepsIdleOnes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newGoroutinePool()
		ran := 0
		for range 3 {
			p.run(func() { ran++ })
			synctest.Wait() // the work done, its goroutine idle
		}
		if ran != 3 || p.started.Load() != 1 {
			t.Fatalf("%d pieces of work ran on %d goroutines, want 3 on 1", ran, p.started.Load())
		}
		time.Sleep(callGoroutineIdle - time.Millisecond)
		p.run(func() { ran++ })
		synctest.Wait()
		if p.started.Load() != 1 {
			t.Fatal("a goroutine idle for less than callGoroutineIdle ended")
		}
		time.Sleep(callGoroutineIdle + time.Millisecond)
		synctest.Wait() // the idle goroutine has ended
		p.run(func() { ran++ })
		synctest.Wait()
		if ran != 5 || p.started.Load() != 2 {
			t.Fatalf("after an idle spell: %d pieces of work, %d goroutines; want 5 on 2", ran, p.started.Load())
		}
		time.Sleep(callGoroutineIdle + time.Second) // the idle goroutine ends
	})
}
