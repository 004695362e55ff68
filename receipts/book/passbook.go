package book

import (
	"errors"
	"fmt"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// What the executor does with a pass an agent hands it: check it against
// the book as it stands, append it, and then judge its helper's calls
// under it (Proposal.Pass) as long as it stands.

// CheckPass reads a pass record as the book would read it as its next
// line, and changes nothing: the entry's problems (its envelope, content,
// signatures against the keys of the agent that passes on, "pass-missing",
// "pass-mismatch", "pass-too-deep", "duplicate-id") and breaches
// ("pass-not-allowed", "pass-wider", "outside-valid-time",
// "after-cancellation"). The pass is signed by whoever passes on: the
// slip's agent, or the helper of the pass it names in "from"; nothing the
// caller says about who handed it over is taken.
func (l *Ledger) CheckPass(rec *record.Record) Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.r
	e := Entry{Index: r.size, Kind: KindPass, Verified: "none", Problems: []Finding{}, Breaches: []Finding{}, Notes: []string{}}
	if rec == nil {
		e.Problems = append(e.Problems, Finding{"bad-envelope", "no pass record"})
		return e
	}
	if err := l.brokenErr(); err != nil {
		e.Problems = append(e.Problems, Finding{"record-not-sound", "the book could not be written, so the record so far is not known: " + err.Error()})
		return e
	}
	// A dry reading: readPass's only change to the reader is the function
	// it returns (not called) and the ids it notes as pending (dropped).
	pending := len(r.pendingIDs)
	r.readPass(&e, rec.Value())
	r.pendingIDs = r.pendingIDs[:pending]
	if len(e.Problems) > 0 {
		e.Verified = "none"
	}
	return e
}

// AppendPass appends a pass record an agent handed over: read as the
// checker reads it, and refused, with nothing written, when it has a
// problem or shows a breach (a pass the slip does not allow, wider than
// its writer holds, dated outside its writer's time, or after the slip
// was cancelled): the executor writes no pass that would show its agent
// outside its slip. The error holds the finding's code (problem.Code).
// From its line on, the ledger judges calls under the pass.
func (b *Book) AppendPass(rec *record.Record) error {
	if rec == nil || rec.Kind != record.Pass {
		return errors.New("AppendPass takes a pass record")
	}
	line, err := Line{Pass: rec}.Bytes()
	if err != nil {
		return err
	}
	return b.appendLines([][]byte{line}, nil, nil, true)
}

// PassState is what the ledger knows of a pass in the book.
type PassState struct {
	Fingerprint string
	Slip        string
	// From is the pass its writer acts under; "" for the slip's own agent.
	From   string
	Helper jwk.KeySet // the keys a helper's stub under it is signed with
	Name   string     // the helper's name, a label
	Level  int        // 1 for a pass from the slip's own agent, up to 10
	// Usable: the pass passed its own check; a helper's call under a pass
	// that did not is refused ("pass-missing").
	Usable bool
	// NotAllowed: the pass, or one above it, is one more in a row than the
	// slip allows; every call under it is refused.
	NotAllowed bool
	// Start and End bound the time every action under the pass is allowed
	// in: the latest start and the earliest end of the pass, of every pass
	// above it and of the slip.
	Start, End time.Time
	// Cancelled: the person cancelled the slip (in the book).
	Cancelled bool
	// Seq is where the helper's chain stands: the number its next stub takes.
	Seq int64
}

// Pass returns what the ledger knows of the pass with that fingerprint;
// false when no pass of that fingerprint was read (or it did not get as
// far as its place in the line of passes).
func (l *Ledger) Pass(fingerprint string) (PassState, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ps := l.r.passes[fingerprint]
	if ps == nil {
		return PassState{}, false
	}
	s := PassState{
		Fingerprint: ps.fingerprint, Slip: ps.pass.Slip, From: ps.pass.From, Helper: ps.pass.To.Keys,
		Name: ps.pass.To.Name, Level: ps.level, Usable: ps.usable, NotAllowed: ps.notAllowed,
		Cancelled: ps.slip.cancelled, Seq: ps.next,
	}
	start, end := ps.slip.rules.validFrom, ps.slip.rules.validUntil
	for p := ps; p != nil; p = p.parent {
		start, end = max(start, p.rules.validFrom), min(end, p.rules.validUntil)
	}
	s.Start, s.End = time.Unix(start, 0).UTC(), time.Unix(end, 0).UTC()
	return s, true
}

// Stopped says why no call under the pass may be made at t (a whole
// second), or "" when its state alone does not stop one: the finding's
// code ("pass-missing" for a pass that did not pass its check,
// "pass-not-allowed", "after-cancellation", "outside-valid-time"). The
// check before acting (Ledger.Reserve with Proposal.Pass) gives the same
// refusal with everything else a call is judged on; an engine calls this
// to end a helper's session the moment its pass stops.
func (s PassState) Stopped(t time.Time) string {
	switch sec := t.Unix(); {
	case !s.Usable:
		return "pass-missing"
	case s.NotAllowed:
		return "pass-not-allowed"
	case s.Cancelled:
		return "after-cancellation"
	case sec < s.Start.Unix() || sec >= s.End.Unix():
		return "outside-valid-time"
	}
	return ""
}

// String names the pass for logs: its fingerprint and level.
func (s PassState) String() string {
	return fmt.Sprintf("pass %s (level %d, until %s)", s.Fingerprint, s.Level, canon.FormatTime(s.End))
}
