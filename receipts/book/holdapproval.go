package book

// HoldForApproval is Hold for a call whose slip asks for the person's
// approval: it also holds an action refused for that one reason alone
// ("approval-missing", and no other finding), counting it against the
// slip's limits while the approval is asked for. [Held.Reserve] with
// p.Approval set then checks the approval as the book will. The decision
// returned is the check's own (not Allowed when the approval is missing);
// the held call is nil when the action is refused for any other reason.
func (l *Ledger) HoldForApproval(p Proposal) (*Held, Decision) {
	l.mu.Lock()
	defer l.mu.Unlock()
	d := l.decideLocked(p)
	if !d.Allowed && !onlyApprovalMissing(d.Decision) {
		return nil, d.Decision
	}
	res := &Reservation{l: l, slip: p.Slip, when: d.when, effects: d.effects, approvalID: d.approvalID}
	l.held[p.Slip] = append(l.held[p.Slip], res)
	if res.approvalID != "" {
		l.approvals[res.approvalID] = true
	}
	l.inflight++
	return &Held{r: res}, d.Decision
}

// onlyApprovalMissing: the one finding is "approval-missing".
func onlyApprovalMissing(d Decision) bool {
	return len(d.Problems) == 0 && len(d.Breaches) == 1 && d.Breaches[0].Code == "approval-missing"
}

// Flying is the number of calls under a slip reserved and not yet in the
// book (or released): a line that must follow their stubs (a
// cancellation) waits until it is 0.
func (l *Ledger) Flying(slip string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.flights[slip])
}
