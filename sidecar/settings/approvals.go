package settings

import "time"

// Approvals is how calls held for a person's approval are asked and answered
// (the settings' "approvals" block; defaults when the block is absent).
type Approvals struct {
	Queue        string        // folder of the request files, absolute; default "approvals" beside the settings
	Timeout      time.Duration // how long a held call waits; no answer is a refusal
	Elicit       bool          // ask through the agent's client where it declared elicitation; default true
	PendingAfter time.Duration // 0 = off: else a call still waiting after this long is answered "waiting"
}

// Approve is a tool rule's "approve": every call to the tool is held for a
// person's yes or no.
type Approve struct {
	Timeout time.Duration // 0 = the approvals block's timeout
}

// Defaults and ranges of approvals.
const (
	DefaultApprovalQueue   = "approvals"
	DefaultApprovalTimeout = 120000 * time.Millisecond
)

func defaultApprovals(dir string) Approvals {
	return Approvals{Queue: joinDir(dir, DefaultApprovalQueue), Timeout: DefaultApprovalTimeout, Elicit: true}
}

func (p *parser) approvals(n *node) error {
	o, err := asObject(n, "queue", "timeout", "elicit", "pendingAfter")
	if err != nil {
		return err
	}
	a := &p.s.Approvals
	if v := o.get("queue"); v != nil {
		if a.Queue, err = p.path(v); err != nil {
			return err
		}
	}
	ms, err := p.wholeOr(o, "timeout", DefaultApprovalTimeout.Milliseconds(), MinTimeout.Milliseconds(), MaxTimeout.Milliseconds())
	if err != nil {
		return err
	}
	a.Timeout = time.Duration(ms) * time.Millisecond
	if a.Elicit, err = p.boolOr(o, "elicit", true); err != nil {
		return err
	}
	if v := o.get("pendingAfter"); v != nil {
		ms, err := v.whole(0, MaxTimeout.Milliseconds())
		if err != nil {
			return err
		}
		a.PendingAfter = time.Duration(ms) * time.Millisecond
	}
	return nil
}

// approve reads a tool rule's "approve": true, false or {"timeout": ms}.
func (p *parser) approve(n *node) (*Approve, error) {
	switch n.kind {
	case 'b':
		if !n.bool {
			return nil, nil
		}
		return &Approve{}, nil
	case '{':
		o, err := asObject(n, "timeout")
		if err != nil {
			return nil, err
		}
		ap := &Approve{}
		if v := o.get("timeout"); v != nil {
			ms, err := v.whole(MinTimeout.Milliseconds(), MaxTimeout.Milliseconds())
			if err != nil {
				return nil, err
			}
			ap.Timeout = time.Duration(ms) * time.Millisecond
		}
		return ap, nil
	}
	return nil, &Error{Place: n.place, Reason: `must be true, false or {"timeout": ms}, not ` + kindName(n.kind)}
}

// ApprovalTimeout is how long a held call to the tool named waits: its own
// approve timeout, else the approvals block's.
func (s *Settings) ApprovalTimeout(tool string) time.Duration {
	if t, ok := s.Tools[tool]; ok && t.Approve != nil && t.Approve.Timeout > 0 {
		return t.Approve.Timeout
	}
	return s.Approvals.Timeout
}
