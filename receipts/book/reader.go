package book

import (
	"fmt"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
)

// slipState is what the reader keeps for one slip: whether it can be
// relied on, its agent's chain of stubs and its running totals (which take
// in the stubs of every chain under the slip: its agent's and its
// helpers').
type slipState struct {
	fingerprint string
	slip        *slip.Slip
	rules       *rules
	usable      bool // the slip passed its own check
	verified    bool // ... and its signature was checked here
	chain            // the agent's own chain
	tally       *tally
	cancelled   bool
}

// chain is where one chain of stubs stands (§7): the slip's own agent's,
// or a helper's under its pass.
type chain struct {
	next     int64
	last     string
	lastWhen int64
}

type cancellationRef struct {
	slip  string
	sound bool
}

// reader is everything worked out from the lines so far, so that one more
// line is read without reading the others again (the reference's reader).
// The checker keeps every entry; the ledger keeps only running counts.
type reader struct {
	opts    Options
	keep    bool
	entries []Entry
	size    int
	// failure is a problem with the book as a whole (too many entries).
	failure *Finding

	slips         map[string]*slipState
	slipOrder     []*slipState
	passes        map[string]*passState
	passOrder     []*passState
	ids           idSet
	approvals     idSet
	cancellations map[string]cancellationRef
	tree          tree
	seals         sealState
	// late are problems found for earlier entries, once a later line was
	// read (a seal's time-stamp showing an entry dated after it existed).
	late []lateFinding

	// The ids a line being read adds, kept apart until the line is taken.
	pendingIDs       []string
	pendingApprovals []string

	running running
	verify  func(k *jwk.Key, input, sig []byte) bool
	// signed are the records of the line being read that were signed in
	// this process (AppendSigned), with the keys that signed them.
	signed []signedValue
	// line is the line being read as parseLines handed it over (with the
	// answers its worker noted), when it came that way.
	line *parsedLine
	// expectSlip, when set, is the slip a stub being appended must be under,
	// and expectPass the pass ("" for the slip's own agent).
	expectSlip, expectPass string
	// refuseBreaches, in strict mode, refuses a line that shows a breach
	// too (Book.AppendPass).
	refuseBreaches bool
	// leaf, when set, is the leaf hash of the line being read, which was
	// handed over cut (see lineScanner).
	leaf *[32]byte
	// covered is whether the line being read is one a checkpoint covers
	// (OpenBook): its hybrid signatures are taken as checked, and the
	// checkpoint's top fingerprint, compared once those lines are read,
	// confirms them or throws the whole reading away.
	covered bool
}

// running is the summary kept line by line, for the check before acting.
type running struct {
	problemEntries int
	firstProblem   *LineFinding
	skipped        bool
	missing        map[string]bool
	uncompared     int
	counts         Counts
}

// LineFinding is a finding with the line (1-based) it was found on.
type LineFinding struct {
	Line    int    `json:"line"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

func newReader(opts Options, keep bool) *reader {
	return &reader{
		opts:          opts,
		keep:          keep,
		slips:         map[string]*slipState{},
		passes:        map[string]*passState{},
		ids:           newIDSet(),
		approvals:     newIDSet(),
		cancellations: map[string]cancellationRef{},
		running:       running{missing: map[string]bool{}},
		seals:         newSealState(),
		verify:        verifyWithKey,
	}
}

func (r *reader) hasID(id string) bool { return r.ids.has(id) || contains(r.pendingIDs, id) }

func (r *reader) hasApproval(id string) bool {
	return r.approvals.has(id) || contains(r.pendingApprovals, id)
}

// idSet holds record ids: 16 bytes each, kept as bytes so that a large
// book holds no pointers for them; an id that does not decode (never, once
// validated) is kept as text.
type idSet struct {
	bytes map[[16]byte]struct{}
	text  map[string]struct{}
}

func newIDSet() idSet { return idSet{bytes: map[[16]byte]struct{}{}, text: map[string]struct{}{}} }

func idKey(id string) ([16]byte, bool) {
	var k [16]byte
	b, err := canon.UnB64(id)
	if err != nil || len(b) != 16 {
		return k, false
	}
	copy(k[:], b)
	return k, true
}

func (s idSet) has(id string) bool {
	if k, ok := idKey(id); ok {
		_, found := s.bytes[k]
		return found
	}
	_, found := s.text[id]
	return found
}

func (s idSet) add(id string) {
	if k, ok := idKey(id); ok {
		s.bytes[k] = struct{}{}
		return
	}
	s.text[id] = struct{}{}
}

func (r *reader) noteID(e *Entry, id string) {
	if r.hasID(id) {
		e.Problems = append(e.Problems, Finding{"duplicate-id", "another record has the same unique number"})
	}
	r.pendingIDs = append(r.pendingIDs, id)
}

// lineRefused is returned by readLine in strict mode for a line that
// would bring a problem into the book.
type lineRefused struct{ finding Finding }

func (e *lineRefused) Error() string { return e.finding.Code + ": " + e.finding.Message }
func (e *lineRefused) Unwrap() error { return problem.New(e.finding.Code, "%s", e.finding.Message) }

// readLine reads one more line. In strict mode (appending) a line that has
// a problem is refused and changes nothing; otherwise every line is taken,
// with its findings, as the checker takes it.
func (r *reader) readLine(line []byte, strict bool) (Entry, error) {
	obj, names, err := readLineValue(line)
	return r.readValue(line, obj, names, err, strict)
}

// readValue reads one more line, given as its text and the value read
// from it (obj and its sorted member names, or the fault that stopped the
// reading).
func (r *reader) readValue(line []byte, obj map[string]any, names string, err error, strict bool) (Entry, error) {
	e := Entry{Index: r.size, Kind: KindUnreadable, Verified: "none", Problems: []Finding{}, Breaches: []Finding{}, Notes: []string{}}
	r.pendingIDs, r.pendingApprovals = r.pendingIDs[:0], r.pendingApprovals[:0]
	var commit func()
	switch {
	case err != nil:
		e.Problems = append(e.Problems, findingOf(err))
	case names == "slip":
		commit = r.readSlip(&e, obj["slip"])
	case stubEntries[names]:
		commit = r.readStub(&e, obj)
	case names == "refusal":
		r.readRefusal(&e, obj["refusal"])
	case names == "cancellation":
		commit = r.readCancellation(&e, obj["cancellation"])
	case names == "acknowledgement":
		r.readAcknowledgement(&e, obj["acknowledgement"])
	case names == "pass":
		commit = r.readPass(&e, obj["pass"])
	case names == "seal" || names == "seal,stamps":
		commit = r.readSeal(&e, obj)
	case unsupportedKinds[names] != "":
		e.Kind = unsupportedKinds[names]
		what := "a " + e.Kind + " entry"
		if names == "cancellation,stamps" {
			what = "time-stamps beside a cancellation"
		}
		e.Problems = append(e.Problems, Finding{"unknown-entry", what + " is not supported by this checker, so the book cannot be shown intact"})
	default:
		e.Problems = append(e.Problems, Finding{"unknown-entry", "the line is not one of the known kinds of entry"})
	}
	if len(e.Problems) > 0 {
		e.Verified = "none"
		if strict {
			return e, &lineRefused{e.Problems[0]}
		}
	}
	if strict && r.refuseBreaches && len(e.Breaches) > 0 {
		return e, &lineRefused{e.Breaches[0]}
	}
	for _, id := range r.pendingIDs {
		r.ids.add(id)
	}
	for _, id := range r.pendingApprovals {
		r.approvals.add(id)
	}
	if commit != nil {
		commit()
	}
	if r.leaf != nil {
		r.tree.addLeaf(*r.leaf)
		r.leaf = nil
	} else {
		r.tree.add(line)
	}
	r.size++
	r.noteTimes(&e)
	r.note(&e)
	if r.keep {
		r.entries = append(r.entries, e)
	}
	return e, nil
}

func (f Finding) String() string { return fmt.Sprintf("%s: %s", f.Code, f.Message) }
