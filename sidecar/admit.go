package sidecar

import "github.com/seed-6e06167c/mcp-executor/sidecar/telemetry"

// lockAdmit takes admitMu for a call and checks that the executor still
// takes calls. It returns true with admitMu held; otherwise it has let go
// of admitMu, run undo (when not nil: what the caller holds for the call),
// and answered the call: not taken when the executor stopped, refused when
// the slip was cancelled (cancel.go).
func (s *Session) lockAdmit(tc *toolCall, undo func()) bool {
	e := s.e
	e.admitMu.Lock()
	stopped, cancelled := e.stopped.Load(), false
	if !stopped {
		cancelled = e.isCancelled()
	}
	if !stopped && !cancelled {
		return true
	}
	e.admitMu.Unlock()
	if undo != nil {
		undo()
	}
	if stopped {
		tc.tel.Decide(telemetry.DecisionNotTaken)
		s.replyCallNotTaken(tc, notTakenStopped)
		s.release(tc)
		return false
	}
	s.refuseCancelled(tc)
	return false
}
