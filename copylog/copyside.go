package copylog

import (
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
)

// CopySide is what compare keeps of a copy read line by line (see
// [ReadFileFunc]): per call a small record, per denial the fingerprints it
// names, per approval answer its fingerprint and answer. No line is kept,
// so its memory is flat in the number of lines beyond that record. Add
// the verified lines in copy order, then call [CopySide.Compare] and
// [CopySide.ApprovalProblems]. The zero value is not ready: use
// [NewCopySide].
type CopySide struct {
	calls   map[string]*copyCall // call -> what the copy says of it
	order   []string             // the sent calls, in the order first sent
	denials []copyDenial
	folded  int // refusals past the hourly cap, counted on denials-folded lines

	answers map[string]string // approval-answer fingerprint -> answer (the first line wins)
	uses    map[string]string // approval-answer fingerprint -> call fingerprint (the last use wins)
	// denialRules counts the denials naming each rules fingerprint.
	denialRules map[string]int
}

// copyCall is what the copy says of one call. A receipt line may come
// before the call's sent line; only calls with a sent line are compared.
type copyCall struct {
	sent       bool
	when       time.Time // of the first sent line
	stub       string    // from the last receipt or late-receipt; "" when none
	late       bool
	notWritten *copyNotWritten // from the last not-written line
}

// copyNotWritten is what compare keeps of a not-written line.
type copyNotWritten struct{ outcome, reason string }

// copyDenial is what compare keeps of a denial line.
type copyDenial struct {
	Call, Reason, Refusal, Rules, Slip, Unwritten string
}

// NewCopySide returns an empty copy side.
func NewCopySide() *CopySide {
	return &CopySide{
		calls:       make(map[string]*copyCall),
		answers:     make(map[string]string),
		uses:        make(map[string]string),
		denialRules: make(map[string]int),
	}
}

// Add takes what compare needs of one verified line of the copy.
func (s *CopySide) Add(ln Line) {
	switch ln.Kind {
	case KindSent:
		c := s.call(ln.Call)
		if !c.sent {
			c.sent, c.when = true, ln.When
			s.order = append(s.order, ln.Call)
		}
	case KindReceipt, KindLateReceipt:
		c := s.call(ln.Call)
		c.stub, c.late = ln.Stub, ln.Kind == KindLateReceipt
	case KindNotWritten:
		nw := &copyNotWritten{reason: ln.Reason}
		if ln.Outcome != nil {
			nw.outcome = ln.Outcome.Name
		}
		s.call(ln.Call).notWritten = nw
	case KindDenial:
		s.denials = append(s.denials, copyDenial{Call: ln.Call, Reason: ln.Reason, Refusal: ln.Refusal, Rules: ln.Rules, Slip: ln.Slip, Unwritten: ln.Unwritten})
		if ln.Rules != "" {
			s.denialRules[ln.Rules]++
		}
	case KindDenialsFolded:
		// Refusals past the hourly cap, counted: none wrote a refusal, by design.
		s.folded += int(ln.Count)
	case KindApprovalAnswer:
		if fp, err := AnswerFingerprint(ln); err == nil {
			if _, seen := s.answers[fp]; !seen {
				s.answers[fp] = ln.Answer
			}
		}
	case KindApprovalUse:
		s.uses[ln.Approval] = canon.Fingerprint([]byte(ln.Call))
	}
}

// DenialRules returns how many denials of the copy name each rules
// fingerprint. The map is the side's own: do not change it.
func (s *CopySide) DenialRules() map[string]int { return s.denialRules }

// call returns the record of call, made on first sight.
func (s *CopySide) call(call string) *copyCall {
	c := s.calls[call]
	if c == nil {
		c = &copyCall{}
		s.calls[call] = c
	}
	return c
}

// copySent is the copy's sent calls, for compareCalls.
type copySent struct {
	calls    map[string]*copyCall
	order    []string
	byCallFP map[string]string // executor.call fingerprint -> call
}

// sent returns the sent calls and their fingerprints.
func (s *CopySide) sent() copySent {
	byCallFP := make(map[string]string, len(s.order))
	for _, call := range s.order {
		byCallFP[canon.Fingerprint([]byte(call))] = call
	}
	return copySent{calls: s.calls, order: s.order, byCallFP: byCallFP}
}
