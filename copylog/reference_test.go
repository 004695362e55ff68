package copylog

import (
	"fmt"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/receipt"
)

// The compare of before CompareLines, kept as the reference the flat one is
// held against (TestCompareLinesAgreesWithReference). It kept a record per
// call and the whole book view.

// refSide is what compare keeps of a copy read line by line (see
// [ReadFileFunc]): per call a small record, per denial the fingerprints it
// names, per approval answer its fingerprint and answer. No line is kept,
// so its memory is flat in the number of lines beyond that record. Add
// the verified lines in copy order, then call [refSide.Compare] and
// [refSide.ApprovalProblems]. The zero value is not ready: use
// [newRefSide].
type refSide struct {
	calls   map[string]*refCall // call -> what the copy says of it
	order   []string            // the sent calls, in the order first sent
	denials []refDenial
	folded  int // refusals past the hourly cap, counted on denials-folded lines

	answers map[string]string // approval-answer fingerprint -> answer (the first line wins)
	uses    map[string]string // approval-answer fingerprint -> call fingerprint (the last use wins)
	// denialRules counts the denials naming each rules fingerprint.
	denialRules map[string]int
}

// refCall is what the copy says of one call. A receipt line may come
// before the call's sent line; only calls with a sent line are compared.
type refCall struct {
	sent       bool
	when       time.Time // of the first sent line
	stub       string    // from the last receipt or late-receipt; "" when none
	late       bool
	notWritten *refNotWritten // from the last not-written line
}

// refNotWritten is what compare keeps of a not-written line.
type refNotWritten struct{ outcome, reason string }

// refDenial is what compare keeps of a denial line.
type refDenial struct {
	Call, Reason, Refusal, Rules, Slip, Unwritten string
}

// newRefSide returns an empty copy side.
func newRefSide() *refSide {
	return &refSide{
		calls:       make(map[string]*refCall),
		answers:     make(map[string]string),
		uses:        make(map[string]string),
		denialRules: make(map[string]int),
	}
}

// Add takes what compare needs of one verified line of the copy.
func (s *refSide) Add(ln Line) {
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
		nw := &refNotWritten{reason: ln.Reason}
		if ln.Outcome != nil {
			nw.outcome = ln.Outcome.Name
		}
		s.call(ln.Call).notWritten = nw
	case KindDenial:
		s.denials = append(s.denials, refDenial{Call: ln.Call, Reason: ln.Reason, Refusal: ln.Refusal, Rules: ln.Rules, Slip: ln.Slip, Unwritten: ln.Unwritten})
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
func (s *refSide) DenialRules() map[string]int { return s.denialRules }

// call returns the record of call, made on first sight.
func (s *refSide) call(call string) *refCall {
	c := s.calls[call]
	if c == nil {
		c = &refCall{}
		s.calls[call] = c
	}
	return c
}

// refSent is the copy's sent calls, for refCompareCalls.
type refSent struct {
	calls    map[string]*refCall
	order    []string
	byCallFP map[string]string // executor.call fingerprint -> call
}

// sent returns the sent calls and their fingerprints.
func (s *refSide) sent() refSent {
	byCallFP := make(map[string]string, len(s.order))
	for _, call := range s.order {
		byCallFP[canon.Fingerprint([]byte(call))] = call
	}
	return refSent{calls: s.calls, order: s.order, byCallFP: byCallFP}
}

// Compare holds what the copy said, line by line, against a book and says
// where they disagree (see [Compare]).
func (s *refSide) Compare(book BookView) Report {
	service := book.Service
	if service == "" {
		service = DefaultService
	}
	r := newReport(service, book)
	cs := s.sent()
	bs := r.refReadBookSide(book, service, cs.byCallFP)
	r.refCompareCalls(cs, bs)
	r.refCompareDenials(s.denials, bs)
	r.Denials += s.folded
	r.DenialsUnwritten += s.folded
	return r
}

// refBookSide is what the book holds: the executor's stubs by call, the
// refusals by fingerprint, and which slips state rules on content.
type refBookSide struct {
	stubsOf   map[string][]BookEntry // call -> the executor's stubs naming it
	refusals  map[string]BookEntry   // fingerprint -> refusal
	slipRules map[string]bool        // slip fingerprint -> states rules
}

// refReadBookSide reads the book's entries; a stub of the executor naming no
// call of the copy is an unknown receipt, and one without rules under a
// slip stating them is noted.
func (r *Report) refReadBookSide(book BookView, service string, byCallFP map[string]string) refBookSide {
	stubsOf := make(map[string][]BookEntry) // call -> the executor's stubs naming it
	refusals := make(map[string]BookEntry)  // fingerprint -> refusal
	slipRules := make(map[string]bool)      // slip fingerprint -> states rules
	for _, e := range book.Entries {
		if e.SlipStatesRules {
			slipRules[e.Slip] = true
		}
		switch e.Kind {
		case EntryRefusal:
			refusals[e.Fingerprint] = e
		case EntryStub:
			if e.With != service {
				continue
			}
			call, known := byCallFP[e.Details[receipt.LabelCall]]
			if !known {
				r.UnknownReceipts = append(r.UnknownReceipts, BookRef{Line: e.Line, Stub: e.Fingerprint, CallFingerprint: e.Details[receipt.LabelCall]})
				continue
			}
			stubsOf[call] = append(stubsOf[call], e)
			if e.SlipStatesRules && e.Details[receipt.LabelRules] == "" {
				r.WithoutRules = append(r.WithoutRules, RulesMissing{Kind: EntryStub, Call: call, Fingerprint: e.Fingerprint, BookLine: e.Line})
			}
		}
	}
	return refBookSide{stubsOf: stubsOf, refusals: refusals, slipRules: slipRules}
}

// refCompareCalls holds each call the copy shows as sent against the book.
func (r *Report) refCompareCalls(cs refSent, bs refBookSide) {
	calls, order, stubsOf := cs.calls, cs.order, bs.stubsOf
	r.Calls = len(order)
	for _, call := range order {
		c := calls[call]
		inBook := stubsOf[call]
		switch {
		case c.stub != "":
			// Every stub in the book for the call other than the one the
			// copy names differs, a second one beside a match included.
			matched := false
			for _, e := range inBook {
				if e.Fingerprint == c.stub && !matched {
					matched = true
					r.Matches = append(r.Matches, Match{Call: call, Stub: c.stub, BookLine: e.Line, Late: c.late})
					continue
				}
				r.Differs = append(r.Differs, Differ{Call: call, CopyStub: c.stub, BookStub: e.Fingerprint, BookLine: e.Line})
			}
			if len(inBook) == 0 {
				r.Missing = append(r.Missing, Missing{Call: call, Stub: c.stub})
			}
		case c.notWritten != nil:
			nw := NotWritten{Call: call, Outcome: c.notWritten.outcome, Reason: c.notWritten.reason}
			if len(inBook) > 0 {
				nw.BookStub, nw.BookLine = inBook[0].Fingerprint, inBook[0].Line
			}
			r.NotWritten = append(r.NotWritten, nw)
		default:
			s := SentWithoutReceipt{Call: call, Sent: canon.FormatTime(c.when)}
			if len(inBook) > 0 {
				s.BookStub, s.BookLine = inBook[0].Fingerprint, inBook[0].Line
			}
			r.SentWithoutReceipt = append(r.SentWithoutReceipt, s)
		}
	}
}

// refCompareDenials holds each denial the copy holds against the book.
func (r *Report) refCompareDenials(denials []refDenial, bs refBookSide) {
	refusals, slipRules := bs.refusals, bs.slipRules
	for _, d := range denials {
		r.Denials++
		if d.Refusal == "" {
			if d.Unwritten == "" || d.Unwritten == UnwrittenCap {
				r.DenialsUnwritten++ // over the hourly cap: no refusal was written
			} else {
				r.DenialsNotWritten = append(r.DenialsNotWritten, DenialNotWritten{Call: d.Call, Reason: d.Reason, Why: d.Unwritten})
			}
			continue
		}
		e, ok := refusals[d.Refusal]
		if !ok {
			r.MissingDenials = append(r.MissingDenials, MissingDenial{Call: d.Call, Refusal: d.Refusal, Reason: d.Reason})
			continue
		}
		if d.Rules == "" && (e.SlipStatesRules || slipRules[d.Slip]) {
			r.WithoutRules = append(r.WithoutRules, RulesMissing{Kind: EntryRefusal, Call: d.Call, Fingerprint: d.Refusal, BookLine: e.Line})
		}
	}
}

// ApprovalProblems is [ApprovalProblems] of the lines added to s.
func (s *refSide) ApprovalProblems(book BookView) []string {
	var out []string
	for _, e := range book.Entries {
		fp, ok := e.Details[receipt.LabelApproval]
		if e.Kind != EntryStub || !ok {
			continue
		}
		answer, found := s.answers[fp]
		switch {
		case !found:
			out = append(out, fmt.Sprintf("book line %d: the stub names an approval the copy does not hold", e.Line))
		case answer != AnswerApproved:
			out = append(out, fmt.Sprintf("book line %d: the stub names an answer that declined", e.Line))
		case s.uses[fp] == "" || s.uses[fp] != e.Details[receipt.LabelCall]:
			out = append(out, fmt.Sprintf("book line %d: the copy has no use of the approval by this call", e.Line))
		}
	}
	return out
}
