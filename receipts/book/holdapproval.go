package book

// HoldForApproval is Hold for a call whose slip asks for the person's
// approval: it also holds an action refused for that one reason alone
// ("approval-missing", and no other finding), counting it against the
// slip's limits while the approval is asked for. [Held.Reserve] with
// p.Approval set then checks the approval as the book will. The decision
// returned is the check's own (not Allowed when the approval is missing);
// the held call is nil when the action is refused for any other reason.
func (l *Ledger) HoldForApproval(p Proposal) (*Held, Decision) {
	return l.hold(p, true)
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
