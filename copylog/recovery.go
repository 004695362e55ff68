package copylog

import (
	"crypto/sha256"
	"slices"

	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// Unfinished is a call the copy shows as sent with no receipt written for it:
// the executor stopped while the call was with the server, or the book could
// not be written. The next start writes its receipt from this.
type Unfinished struct {
	Sent Line // the sent line: call, tool, action, amount, slip, details, time
	// Outcome is the outcome the executor knew when the book could not be
	// written (from the last not-written line), or nil where the executor
	// stopped before the outcome was known.
	Outcome *record.Detail
	// Reason is why the book could not be written, from that line ("" when
	// Outcome is nil).
	Reason string
}

// UnfinishedCalls lists, in the order they were sent, the sent calls that
// have no receipt or late-receipt line.
func UnfinishedCalls(lines []Line) []Unfinished {
	var acc unfinishedAcc
	for _, ln := range lines {
		acc.add(ln)
	}
	return acc.list()
}

// unfinishedAcc works out UnfinishedCalls line by line, for Open and
// ReadUnfinished, which hold no other line: it keeps the sent calls still
// without a receipt, and of the others only a 16-byte hash of their id (so
// that a call id sent again after its receipt is not listed).
type unfinishedAcc struct {
	pending    map[string]*pendingCall
	done       map[[16]byte]struct{}
	notWritten map[string]Line // not-written lines of calls not yet sent
	n          int
}

type pendingCall struct {
	order int
	u     Unfinished
}

func callKey(call string) [16]byte {
	s := sha256.Sum256([]byte(call))
	var k [16]byte
	copy(k[:], s[:16])
	return k
}

func (a *unfinishedAcc) add(ln Line) {
	if a.pending == nil {
		a.pending, a.done, a.notWritten = map[string]*pendingCall{}, map[[16]byte]struct{}{}, map[string]Line{}
	}
	switch ln.Kind {
	case KindReceipt, KindLateReceipt:
		delete(a.pending, ln.Call)
		delete(a.notWritten, ln.Call)
		a.done[callKey(ln.Call)] = struct{}{}
	case KindNotWritten:
		if p := a.pending[ln.Call]; p != nil {
			o := *ln.Outcome
			p.u.Outcome, p.u.Reason = &o, ln.Reason
		} else if _, done := a.done[callKey(ln.Call)]; !done {
			a.notWritten[ln.Call] = ln
		}
	case KindSent:
		if _, done := a.done[callKey(ln.Call)]; done || a.pending[ln.Call] != nil {
			return // a call id sent twice is listed once
		}
		a.n++
		p := &pendingCall{order: a.n, u: Unfinished{Sent: ln}}
		if nw, ok := a.notWritten[ln.Call]; ok {
			o := *nw.Outcome
			p.u.Outcome, p.u.Reason = &o, nw.Reason
			delete(a.notWritten, ln.Call)
		}
		a.pending[ln.Call] = p
	}
}

// list is the unfinished calls in the order they were sent.
func (a *unfinishedAcc) list() []Unfinished {
	ps := make([]*pendingCall, 0, len(a.pending))
	for _, p := range a.pending {
		ps = append(ps, p)
	}
	slices.SortFunc(ps, func(x, y *pendingCall) int { return x.order - y.order })
	var out []Unfinished
	for _, p := range ps {
		out = append(out, p.u)
	}
	return out
}

// unsettled is the calls a is left with that have no receipt: those sent,
// and those whose not-written line came before their sent line.
func (a *unfinishedAcc) unsettled() map[string]struct{} {
	out := make(map[string]struct{}, len(a.pending)+len(a.notWritten))
	for call := range a.pending {
		out[call] = struct{}{}
	}
	for call := range a.notWritten {
		out[call] = struct{}{}
	}
	return out
}
