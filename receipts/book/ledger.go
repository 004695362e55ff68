package book

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Ledger is the check before acting for one open book: the state read from
// the book once, kept up to date as lines are appended, and the calls still
// in flight. Its answer equals the reference's checkBefore on the book as
// it stands with the stubs of the calls in flight added; its cost per check
// does not grow with the book. It is safe for concurrent use.
type Ledger struct {
	mu        sync.Mutex
	r         *reader
	flights   map[string][]*Reservation // by slip, in reservation order
	held      map[string][]*Reservation // by slip: calls held for a person (hold.go), counted, not in the order
	approvals map[string]bool           // approval ids used by calls in flight
	inflight  int
	broken    atomic.Pointer[error] // set when the book could not be written
}

func newLedger(r *reader) *Ledger {
	return &Ledger{r: r, flights: map[string][]*Reservation{}, held: map[string][]*Reservation{}, approvals: map[string]bool{}}
}

// Reservation is a call that passed the check before acting and is still
// in flight: its amount, count and periods are counted against the slip's
// limits until its stub is committed to the book or it is released.
type Reservation struct {
	l    *Ledger
	slip string
	// pass is the helper's pass; "" for the slip's own agent.
	pass        string
	when        int64
	effects     []effect
	passEffects []passEffect // on the pass and every pass above it
	approvalID  string
	turn        chan struct{} // closed when every earlier call under the slip is done
	done        bool
}

// Position is a stub's place in its chain: the slip's agent's, or for a
// helper's call, the chain of its pass.
type Position struct {
	Seq      int64
	Previous string // the fingerprint of the stub before it; "" for seq 0
}

// CheckBefore asks whether an action would be outside its slip, counting
// the calls in flight. It changes nothing.
func (l *Ledger) CheckBefore(p Proposal) Decision {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.decideLocked(p).Decision
}

func (l *Ledger) decideLocked(p Proposal) decided {
	if err := l.brokenErr(); err != nil {
		return decided{Decision: Decision{Problems: []Finding{{"record-not-sound", "the book could not be written, so the record so far is not known: " + err.Error()}}, Breaches: []Finding{}, Needs: []string{}}}
	}
	return l.r.decide(p, &flight{calls: l.counted(p.Slip), approvals: l.approvals, lines: l.inflight, quick: true})
}

// Reserve checks a proposed action and, when it is allowed, counts it as
// in flight until the returned reservation is committed (its stub appended
// with Book.AppendStub) or released. Calls reserved together cannot
// jointly pass a limit. The reservation is nil when the action is not
// allowed.
func (l *Ledger) Reserve(p Proposal) (*Reservation, Decision) {
	l.mu.Lock()
	defer l.mu.Unlock()
	d := l.decideLocked(p)
	if !d.Allowed {
		return nil, d.Decision
	}
	res := l.flyLocked(p.Slip, d)
	l.inflight++
	return res, d.Decision
}

// newReservation is the reservation of an allowed call under slip, made
// of its decision.
func (l *Ledger) newReservation(slip string, d decided) *Reservation {
	res := &Reservation{l: l, slip: slip, when: d.when, effects: d.effects, passEffects: d.passEffects, approvalID: d.approvalID}
	if d.pass != nil {
		res.pass = d.pass.fingerprint
	}
	return res
}

// flyLocked puts an allowed call in flight under slip, last in the send
// order (its turn is now when nothing of the slip is in flight), with its
// approval taken. Called with l.mu held.
func (l *Ledger) flyLocked(slip string, d decided) *Reservation {
	res := l.newReservation(slip, d)
	res.turn = make(chan struct{})
	if len(l.flights[slip]) == 0 {
		close(res.turn)
	}
	l.flights[slip] = append(l.flights[slip], res)
	if res.approvalID != "" {
		l.approvals[res.approvalID] = true
	}
	return res
}

// When is the time the reservation was checked at: the time its stub states.
func (r *Reservation) When() time.Time { return time.Unix(r.when, 0).UTC() }

// Slip is the fingerprint of the slip the call was reserved under.
func (r *Reservation) Slip() string { return r.slip }

// Pass is the fingerprint of the pass a helper's call was reserved under;
// "" for the slip's own agent. Its stub must name it (and be signed with
// the keys of the helper it names).
func (r *Reservation) Pass() string { return r.pass }

// Position waits until every call reserved before this one under the same
// slip (in any chain: the agent's and its helpers') has had its stub
// appended or was released, and then gives this call's stub its place in
// its chain. Stubs thus enter the book in the order the calls were
// reserved.
func (r *Reservation) Position(ctx context.Context) (Position, error) {
	select {
	case <-r.turn:
	case <-ctx.Done():
		return Position{}, fmt.Errorf("waiting for the stubs of earlier calls: %w", ctx.Err())
	}
	l := r.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if r.done {
		return Position{}, errors.New("the reservation was already committed or released")
	}
	st := l.r.slips[r.slip]
	if st == nil {
		return Position{}, fmt.Errorf("the slip %s is not in the book", r.slip)
	}
	if r.pass != "" {
		ps := l.r.passes[r.pass]
		if ps == nil {
			return Position{}, fmt.Errorf("the pass %s is not in the book", r.pass)
		}
		return Position{Seq: ps.next, Previous: ps.last}, nil
	}
	return Position{Seq: st.next, Previous: st.last}, nil
}

// Release ends a reservation whose stub will not be written. Releasing a
// committed or released reservation does nothing.
func (r *Reservation) Release() {
	r.l.mu.Lock()
	defer r.l.mu.Unlock()
	r.l.endLocked(r)
}

// dropReservation takes r out of its slip's list in bySlip, and the slip
// out of bySlip when that leaves the list empty; it returns the rest of
// the list, in order.
func dropReservation(bySlip map[string][]*Reservation, r *Reservation) []*Reservation {
	list := bySlip[r.slip]
	for i, x := range list {
		if x == r {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(bySlip, r.slip)
	} else {
		bySlip[r.slip] = list
	}
	return list
}

// endLocked takes a reservation out of flight and hands the turn on.
func (l *Ledger) endLocked(r *Reservation) {
	if r.done {
		return
	}
	r.done = true
	if list := dropReservation(l.flights, r); len(list) > 0 {
		select {
		case <-list[0].turn:
		default:
			close(list[0].turn)
		}
	}
	if r.approvalID != "" {
		delete(l.approvals, r.approvalID)
	}
	l.inflight--
}

// InFlight is the number of calls reserved and not yet committed or released.
func (l *Ledger) InFlight() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.inflight
}

// Sound says whether the book as read so far could allow an action: nil,
// or an error naming the first problem and its line.
func (l *Ledger) Sound() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.brokenErr(); err != nil {
		return err
	}
	r := l.r
	switch {
	case r.failure != nil:
		return fmt.Errorf("the book cannot be used: %s", r.failure)
	case r.running.firstProblem != nil:
		p := r.running.firstProblem
		return fmt.Errorf("line %d of the book has a problem: %s: %s", p.Line, p.Code, p.Message)
	case r.running.skipped || len(r.running.missing) > 0:
		return errors.New("not every signature in the book could be checked here")
	case r.running.uncompared > 0:
		return errors.New("not every stub in the book could be compared with its slip")
	}
	return nil
}

// Size is the number of entries read so far.
func (l *Ledger) Size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.size
}

// Counts are the numbers of entries of each kind read so far.
func (l *Ledger) Counts() Counts {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.running.counts
}

func (l *Ledger) brokenErr() error {
	if p := l.broken.Load(); p != nil {
		return *p
	}
	return nil
}
