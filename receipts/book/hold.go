package book

import "errors"

// Held is a call that passed the check before acting and waits for a
// person's approval. While it waits it counts against the slip's limits
// like a call in flight (its amount, count and periods), but it has no
// place in the order stubs enter the book: a held call never makes a later
// call under the same slip wait for its Position. When the approval comes,
// [Held.Reserve] checks the call again and makes it a [Reservation], which
// takes its place after every call reserved before it.
type Held struct {
	r *Reservation
}

// ErrHeldEnded is the problem of a Reserve on a held call already reserved
// or released.
var ErrHeldEnded = errors.New("the held call was already reserved or released")

// counted are the calls the check counts beside the book under a slip: those
// in flight, then those held. Called with l.mu held.
func (l *Ledger) counted(slip string) []*Reservation {
	held := l.held[slip]
	if len(held) == 0 {
		return l.flights[slip]
	}
	fl := l.flights[slip]
	return append(fl[:len(fl):len(fl)], held...)
}

// Hold checks a proposed action and, when it is allowed, counts it as held
// until it is reserved ([Held.Reserve]) or released. Calls held together,
// and held and in flight together, cannot jointly pass a limit. The held
// call is nil when the action is not allowed.
func (l *Ledger) Hold(p Proposal) (*Held, Decision) {
	return l.hold(p, false)
}

// hold is Hold, and with approvalMissing, HoldForApproval (holdapproval.go).
func (l *Ledger) hold(p Proposal, approvalMissing bool) (*Held, Decision) {
	l.mu.Lock()
	defer l.mu.Unlock()
	d := l.decideLocked(p)
	if !d.Allowed && (!approvalMissing || !onlyApprovalMissing(d.Decision)) {
		return nil, d.Decision
	}
	res := l.newReservation(p.Slip, d)
	l.held[p.Slip] = append(l.held[p.Slip], res)
	if res.approvalID != "" {
		l.approvals[res.approvalID] = true
	}
	l.inflight++
	return &Held{r: res}, d.Decision
}

// Reserve checks the held call again as p (normally the same proposal at
// the time of the approval) with its own share no longer counted, and, when
// it is allowed, turns it into a reservation in flight: from then on it is
// in the order of stubs, after every call reserved before. When p is not
// allowed the call stays held (release it); the reservation is then nil.
func (h *Held) Reserve(p Proposal) (*Reservation, Decision) {
	l := h.r.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if h.r.done {
		return nil, Decision{Problems: []Finding{{"record-not-sound", ErrHeldEnded.Error()}}, Breaches: []Finding{}, Needs: []string{}}
	}
	l.unholdLocked(h.r)
	d := l.decideLocked(p)
	if !d.Allowed || p.Slip != h.r.slip || p.Pass != h.r.pass {
		l.held[h.r.slip] = append(l.held[h.r.slip], h.r)
		if h.r.approvalID != "" {
			l.approvals[h.r.approvalID] = true
		}
		if d.Allowed {
			return nil, Decision{Problems: []Finding{{"record-not-sound", "a held call is reserved under the slip and the pass it was held under"}}, Breaches: []Finding{}, Needs: []string{}}
		}
		return nil, d.Decision
	}
	h.r.done = true
	return l.flyLocked(p.Slip, d), d.Decision
}

// Release ends a held call that will not be sent. Releasing one already
// reserved or released does nothing.
func (h *Held) Release() {
	l := h.r.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if h.r.done {
		return
	}
	h.r.done = true
	l.unholdLocked(h.r)
	l.inflight--
}

// Held is the number of calls held and not yet reserved or released.
func (l *Ledger) Held() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, list := range l.held {
		n += len(list)
	}
	return n
}

// unholdLocked takes r out of the held calls (its in-flight count stays).
// Called with l.mu held.
func (l *Ledger) unholdLocked(r *Reservation) {
	dropReservation(l.held, r)
	if r.approvalID != "" {
		delete(l.approvals, r.approvalID)
	}
}
