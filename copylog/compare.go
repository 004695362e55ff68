package copylog

import (
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/receipt"
)

// Book entry kinds a BookView holds.
const (
	EntryStub    = "stub"
	EntryRefusal = "refusal"
)

// DefaultService is the executor's id in a slip's with when the settings
// name none.
const DefaultService = "executor"

// BookView is what Compare needs of a book, filled by the caller from a
// checked book. It holds fingerprints and labels only.
type BookView struct {
	// Service is the executor's id in the slip's with ("" means
	// DefaultService): stubs whose with names it are the executor's.
	Service string
	// Intact is whether the book could be read and checked to its end.
	Intact bool
	// Problems is how many problems the book's checker found.
	Problems int
	// Entries are the book's stubs and refusals, in book order.
	Entries []BookEntry
}

// BookEntry is one stub or refusal of the book.
type BookEntry struct {
	Line        int               // 1-based line number in the book
	Kind        string            // EntryStub or EntryRefusal
	Fingerprint string            // the record's fingerprint
	With        string            // a stub's with ("" when none)
	Details     map[string]string // a stub's details: label -> sha256
	Slip        string            // the slip's fingerprint
	// SlipStatesRules is whether that slip states rules on content (an
	// agent.software entry named "Content rules of …").
	SlipStatesRules bool
}

// Compare holds the verified lines of a copy against a book and says where
// they disagree. A stub belongs to call C when it names the executor's
// service in with and its executor.call detail is canon.Fingerprint of C's
// text. It is [CopySide.Compare] of the lines added in order.
func Compare(lines []Line, book BookView) Report {
	s := NewCopySide()
	for _, ln := range lines {
		s.Add(ln)
	}
	return s.Compare(book)
}

// Compare holds what the copy said, line by line, against a book and says
// where they disagree (see [Compare]).
func (s *CopySide) Compare(book BookView) Report {
	service := book.Service
	if service == "" {
		service = DefaultService
	}
	r := newReport(service, book)
	cs := s.sent()
	bs := r.readBookSide(book, service, cs.byCallFP)
	r.compareCalls(cs, bs)
	r.compareDenials(s.denials, bs)
	r.Denials += s.folded
	r.DenialsUnwritten += s.folded
	return r
}

// bookSide is what the book holds: the executor's stubs by call, the
// refusals by fingerprint, and which slips state rules on content.
type bookSide struct {
	stubsOf   map[string][]BookEntry // call -> the executor's stubs naming it
	refusals  map[string]BookEntry   // fingerprint -> refusal
	slipRules map[string]bool        // slip fingerprint -> states rules
}

// readBookSide reads the book's entries; a stub of the executor naming no
// call of the copy is an unknown receipt, and one without rules under a
// slip stating them is noted.
func (r *Report) readBookSide(book BookView, service string, byCallFP map[string]string) bookSide {
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
	return bookSide{stubsOf: stubsOf, refusals: refusals, slipRules: slipRules}
}

// compareCalls holds each call the copy shows as sent against the book.
func (r *Report) compareCalls(cs copySent, bs bookSide) {
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

// compareDenials holds each denial the copy holds against the book.
func (r *Report) compareDenials(denials []copyDenial, bs bookSide) {
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
