package held

import (
	"sync"

	"github.com/seed-6e06167c/mcp-executor/sidecar/approval"
)

// Holds are the calls held for approval in one process, and the slip's
// cancellation: once the slip is cancelled every wait ends at once, and
// the requests of its held calls are taken down.
type Holds struct {
	slip string // the slip's fingerprint

	mu        sync.Mutex
	cancelled bool
	held      map[*Call]struct{}
	hub       *approval.Hub // once open (SetHub); nil before or without one
}

// NewHolds holds the calls of the slip whose fingerprint is slip.
func NewHolds(slip string) *Holds {
	return &Holds{slip: slip, held: map[*Call]struct{}{}}
}

// Cancelled reports whether the slip was cancelled.
func (hs *Holds) Cancelled() bool {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.cancelled
}

// Track notes a held call, so that a cancellation ends its wait; when the
// slip is cancelled already its wait ends at once.
func (hs *Holds) Track(c *Call) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.cancelled {
		// Cancelled between the call's admission and now: Cancel has
		// already ended the waits it knew of.
		c.Cancel()
		return
	}
	hs.held[c] = struct{}{}
}

// Untrack forgets a held call whose wait is over.
func (hs *Holds) Untrack(c *Call) {
	hs.mu.Lock()
	delete(hs.held, c)
	hs.mu.Unlock()
}

// Cancel takes the slip as cancelled: no call is held from now on, and
// the function it returns ends the waits of the calls held now and takes
// down their requests. The engine calls Cancel under its admission lock
// and what it returns outside it.
func (hs *Holds) Cancel() (endWaits func()) {
	hs.mu.Lock()
	hs.cancelled = true
	held := make([]*Call, 0, len(hs.held))
	for c := range hs.held {
		held = append(held, c)
	}
	hs.mu.Unlock()
	return func() {
		for _, c := range held {
			c.Cancel()
		}
		hs.Withdraw()
	}
}

// Withdraw takes down the requests of the slip's held calls (their queue
// and page files) once the slip is cancelled: the person is not left
// looking at calls that can no longer run. A held call refused after the
// cancellation calls it too: its request may have been made after
// Cancel's pass.
func (hs *Holds) Withdraw() {
	hs.mu.Lock()
	hub := hs.hub
	hs.mu.Unlock()
	if hub != nil {
		hub.EndSlip(hs.slip)
	}
}

// SetHub hands the approvals hub to Withdraw, once it is open; when the
// slip is cancelled already (at the start, or meanwhile) the requests the
// copy kept for it are taken down at once.
func (hs *Holds) SetHub(hub *approval.Hub) {
	hs.mu.Lock()
	hs.hub = hub
	cancelled := hs.cancelled
	hs.mu.Unlock()
	if cancelled {
		hub.EndSlip(hs.slip)
	}
}
