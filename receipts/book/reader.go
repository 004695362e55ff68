package book

import (
	"fmt"
	"math"
	"sort"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
)

// slipState is what the reader keeps for one slip: whether it can be
// relied on, its agent's chain of stubs and its running totals.
type slipState struct {
	fingerprint string
	slip        *slip.Slip
	rules       *rules
	usable      bool // the slip passed its own check
	verified    bool // ... and its signature was checked here
	next        int64
	last        string
	lastWhen    int64
	tally       *tally
	cancelled   bool
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
	ids           idSet
	approvals     idSet
	cancellations map[string]cancellationRef
	tree          tree

	// The ids a line being read adds, kept apart until the line is taken.
	pendingIDs       []string
	pendingApprovals []string

	running running
	verify  func(k *jwk.Key, input, sig []byte) bool
	// expectSlip, when set, is the slip a stub being appended must be under.
	expectSlip string
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
		ids:           newIDSet(),
		approvals:     newIDSet(),
		cancellations: map[string]cancellationRef{},
		running:       running{missing: map[string]bool{}},
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

// errLineRefused is returned by readLine in strict mode for a line that
// would bring a problem into the book.
type lineRefused struct{ finding Finding }

func (e *lineRefused) Error() string { return e.finding.Code + ": " + e.finding.Message }
func (e *lineRefused) Unwrap() error { return problem.New(e.finding.Code, "%s", e.finding.Message) }

// readLine reads one more line. In strict mode (appending) a line that has
// a problem is refused and changes nothing; otherwise every line is taken,
// with its findings, as the checker takes it.
func (r *reader) readLine(line []byte, strict bool) (Entry, error) {
	e := Entry{Index: r.size, Kind: KindUnreadable, Verified: "none", Problems: []Finding{}, Breaches: []Finding{}, Notes: []string{}}
	r.pendingIDs, r.pendingApprovals = r.pendingIDs[:0], r.pendingApprovals[:0]
	var commit func()
	obj, names, err := readLineValue(line)
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
	for _, id := range r.pendingIDs {
		r.ids.add(id)
	}
	for _, id := range r.pendingApprovals {
		r.approvals.add(id)
	}
	if commit != nil {
		commit()
	}
	r.tree.add(line)
	r.size++
	r.note(&e)
	if r.keep {
		r.entries = append(r.entries, e)
	}
	return e, nil
}

func (r *reader) findSlip(fingerprint string) (*slipState, error) {
	st := r.slips[fingerprint]
	if st == nil {
		return nil, problemf("slip-missing", "the slip this entry relies on is not earlier in the book")
	}
	if !st.usable {
		return nil, problemf("slip-unusable", "the slip this entry relies on did not pass its own check")
	}
	return st, nil
}

// underConfirmedSlip: what sits under a slip this device could not
// confirm is not evidence either, whatever its own signatures say.
func underConfirmedSlip(e *Entry, st *slipState) {
	if st.verified || e.Verified == "none" {
		return
	}
	e.Verified = "none"
	e.Notes = append(e.Notes, "the slip this entry relies on could not be confirmed on this device, so this entry is not shown")
}

func (r *reader) readSlip(e *Entry, v any) func() {
	e.Kind = KindSlip
	s, res := slip.Check(v, r.opts.slipOptions())
	e.Fingerprint = res.Fingerprint
	for _, p := range res.Problems {
		e.Problems = append(e.Problems, Finding{p.Code, p.Message})
	}
	e.Notes = append(e.Notes, res.Notes...)
	e.passkeyState, e.passkeyAlg = res.Signature.State, res.Signature.Alg
	if res.Content != nil && s != nil {
		r.noteID(e, s.ID)
	}
	var add *slipState
	if res.Fingerprint != "" {
		if _, dup := r.slips[res.Fingerprint]; dup {
			e.Problems = append(e.Problems, Finding{"duplicate-slip", "this slip is already in the book"})
		} else {
			usable := len(e.Problems) == 0 && s != nil
			add = &slipState{
				fingerprint: res.Fingerprint, slip: s, usable: usable,
				verified: usable && res.Signature.State == stateValid,
				lastWhen: math.MinInt64, tally: newTally(),
			}
			if s != nil {
				add.rules = rulesOf(s)
			}
		}
	}
	if res.Signature.State == stateValid {
		e.Verified = "all"
	}
	if add == nil {
		return nil
	}
	return func() {
		r.slips[add.fingerprint] = add
		r.slipOrder = append(r.slipOrder, add)
	}
}

func (r *reader) readStub(e *Entry, v map[string]any) func() {
	e.Kind = KindStub
	e.counterState, e.approvalState = stateAbsent, stateAbsent
	if has(v, "countersignature") {
		e.counterState = stateUnchecked
	}
	rec, err := record.Parse(v["stub"], "stub")
	if err != nil {
		e.Problems = append(e.Problems, findingOf(err))
		return nil
	}
	e.Fingerprint = rec.Fingerprint
	if err := record.ValidateStub(rec.Content); err != nil {
		e.Problems = append(e.Problems, findingOf(err))
		return nil
	}
	c := rec.Content
	e.Slip = str(c, "slip")
	r.noteID(e, str(c, "id"))
	if r.expectSlip != "" && e.Slip != r.expectSlip {
		e.Problems = append(e.Problems, Finding{"check-failed", "the stub is not under the slip its call was reserved under"})
		return nil
	}
	st, err := r.findSlip(e.Slip)
	if err != nil {
		e.Problems = append(e.Problems, findingOf(err))
		return nil
	}
	if has(c, "pass") {
		// Passes are not read here, so the pass is never earlier in the book.
		e.Problems = append(e.Problems, Finding{"pass-missing", "the stub names a pass, and passes for helper agents are not supported by this checker"})
		return nil
	}
	e.signatures = r.keySetSignatures(rec, st.slip.Agent.Keys)
	if overall(e.signatures) == stateInvalid {
		e.Problems = append(e.Problems, Finding{"signature-invalid", "a signature on the stub does not fit the agent's keys"})
	}
	e.Verified = verifiedBy(e.signatures)
	underConfirmedSlip(e, st)

	// Its place in the chain; carry on from it, so that one break is reported once.
	q := requestOf(c)
	seq := whole(c, "seq")
	if seq != st.next || (seq > 0 && str(c, "previous") != st.last) {
		e.Problems = append(e.Problems, Finding{"chain-broken", "the chain is broken here: a stub is missing, moved, repeated or changed"})
	}
	if q.when < st.lastWhen {
		e.Problems = append(e.Problems, Finding{"time-went-backwards", "this stub is dated before the stub ahead of it"})
	}

	svc := st.rules.with[q.with]
	if !q.hasWith {
		svc = nil
	}
	if has(v, "countersignature") {
		e.counterState = stateInvalid
		if err := r.checkCountersignature(e, v["countersignature"], rec.Fingerprint, svc); err != nil {
			e.Problems = append(e.Problems, findingOf(err))
		}
	}
	if has(v, "approval") {
		e.approvalState = stateInvalid
		err := func() error {
			if !has(c, "approval") {
				return problemf("approval-mismatch", "the stub does not name the approval that is with it")
			}
			a, err := r.checkApproval(v["approval"], c, e.Slip, st, r)
			if err != nil {
				return err
			}
			e.approvalState, e.approvalAlg = a.state, a.alg
			if a.when > q.when+clockAllowance {
				return problemf("approval-dated-after-stub", "the approval is dated later than the stub that carries it")
			}
			return nil
		}()
		if err != nil {
			e.Problems = append(e.Problems, findingOf(err))
		}
	} else if has(c, "approval") {
		e.Problems = append(e.Problems, Finding{"approval-not-found", "the stub names an approval that is not with it"})
	}
	if has(c, "terms") {
		e.Problems = append(e.Problems, Finding{"terms-not-found", "the stub relies on a service's terms, and terms are not supported by this checker"})
	}

	var effects []effect
	if len(e.Problems) == 0 && e.Verified != "none" && st.verified {
		e.Compared = true
		shown := compareWithSlip(st.rules, committedView{st.tally}, q, svc, st.cancelled, forChecker)
		effects = shown.effects
		e.Breaches = append(e.Breaches, shown.breaches...)
		e.Needs = shown.needs
		if contains(shown.needs, "countersignature") && e.counterState == stateAbsent {
			e.Breaches = append(e.Breaches, Finding{"countersignature-missing", "the slip asks for the other side to countersign this action, and there is no countersignature"})
		}
		if contains(shown.needs, "approval") && e.approvalState == stateAbsent {
			e.Breaches = append(e.Breaches, Finding{"approval-missing", "the slip asks for the person's own approval of this action, and there is none"})
		}
	}
	fingerprint, index, compared := rec.Fingerprint, e.Index, e.Compared
	return func() {
		st.next, st.last, st.lastWhen = seq+1, fingerprint, q.when
		if compared {
			st.tally.apply(effects, q.when, index)
		}
	}
}

func (r *reader) checkCountersignature(e *Entry, v any, stubFingerprint string, svc *service) error {
	rec, err := record.Parse(v, "countersignature")
	if err != nil {
		return err
	}
	if err := record.ValidateCountersignature(rec.Content); err != nil {
		return err
	}
	if str(rec.Content, "stub") != stubFingerprint {
		return problemf("countersignature-wrong-stub", "the countersignature was made for a different stub")
	}
	if svc == nil || svc.keys == nil {
		return problemf("countersignature-not-possible", "the slip names no keys for a service that could have countersigned this stub")
	}
	e.counterSigs = r.keySetSignatures(rec, *svc.keys)
	e.counterState = overall(e.counterSigs)
	if e.counterState == stateInvalid {
		return problemf("countersignature-invalid", "a signature on the countersignature does not fit the service's keys")
	}
	return nil
}

// idBook is where an approval's id is looked up and noted: the reader
// while a line is read, or a throwaway overlay for a proposal.
type idBook interface {
	hasID(id string) bool
	hasApproval(id string) bool
	noteApproval(id string)
}

func (r *reader) noteApproval(id string) {
	r.pendingIDs = append(r.pendingIDs, id)
	r.pendingApprovals = append(r.pendingApprovals, id)
}

type approvalCheck struct {
	state, alg, fingerprint, id string
	when                        int64
}

// checkApproval checks the person's approval of one action against that
// action (the reference's checkApprovalRecord), in the reference's order.
func (r *reader) checkApproval(v any, c map[string]any, slipFingerprint string, st *slipState, ids idBook) (approvalCheck, error) {
	rec, err := record.Parse(v, "approval")
	if err != nil {
		return approvalCheck{}, err
	}
	if err := slip.ValidateApproval(rec.Content); err != nil {
		return approvalCheck{}, err
	}
	a := rec.Content
	if str(a, "slip") != slipFingerprint || requestText(a) != requestText(c) {
		return approvalCheck{}, problemf("approval-mismatch", "the approval was given for something else")
	}
	if has(c, "approval") && str(c, "approval") != rec.Fingerprint {
		return approvalCheck{}, problemf("approval-mismatch", "the approval with this stub is not the one the stub names")
	}
	id := str(a, "id")
	if ids.hasApproval(id) {
		return approvalCheck{}, problemf("approval-reused", "this approval has already been used for another action")
	}
	if ids.hasID(id) {
		return approvalCheck{}, problemf("duplicate-id", "another record has the same unique number")
	}
	ids.noteApproval(id)
	state, err := r.passkeyState(st.slip, rec)
	if err != nil {
		return approvalCheck{}, problemf("approval-invalid", "the approval was not signed with the passkey the slip names, or its passkey values do not check")
	}
	return approvalCheck{state: state, alg: st.slip.Issuer.Key.Alg, fingerprint: rec.Fingerprint, id: id, when: timeOf(a, "when")}, nil
}

func (r *reader) readRefusal(e *Entry, v any) {
	e.Kind = KindRefusal
	rec, err := record.Parse(v, "refusal")
	if err != nil {
		e.Problems = append(e.Problems, findingOf(err))
		return
	}
	e.Fingerprint = rec.Fingerprint
	if err := record.ValidateRefusal(rec.Content); err != nil {
		e.Problems = append(e.Problems, findingOf(err))
		return
	}
	c := rec.Content
	e.Slip = str(c, "slip")
	r.noteID(e, str(c, "id"))
	st, err := r.findSlip(e.Slip)
	if err != nil {
		e.Problems = append(e.Problems, findingOf(err))
		return
	}
	by, _ := c["by"].(map[string]any)
	keys, err := jwk.CheckKeySet(by["keys"])
	if err != nil {
		e.Problems = append(e.Problems, findingOf(err))
		return
	}
	e.signatures = r.keySetSignatures(rec, keys)
	if overall(e.signatures) == stateInvalid {
		e.Problems = append(e.Problems, Finding{"signature-invalid", "a signature on the refusal does not fit the keys the refusal gives"})
	}
	e.Verified = verifiedBy(e.signatures)
	underConfirmedSlip(e, st)
}

func (r *reader) readCancellation(e *Entry, v any) func() {
	e.Kind = KindCancellation
	e.passkeyState = stateUnchecked
	rec, err := record.Parse(v, "cancellation")
	if err != nil {
		e.Problems = append(e.Problems, findingOf(err))
		return nil
	}
	e.Fingerprint = rec.Fingerprint
	// The acknowledgement that names it finds it whatever became of it.
	ref := func(st *slipState) func() {
		fp, slipFP := e.Fingerprint, e.Slip
		return func() {
			if _, seen := r.cancellations[fp]; !seen {
				r.cancellations[fp] = cancellationRef{slip: slipFP, sound: len(e.Problems) == 0}
			}
			if st != nil {
				st.cancelled = true
			}
		}
	}
	if err := slip.ValidateCancellation(rec.Content); err != nil {
		e.Problems = append(e.Problems, findingOf(err))
		return ref(nil)
	}
	c := rec.Content
	e.Slip = str(c, "slip")
	r.noteID(e, str(c, "id"))
	st, err := r.findSlip(e.Slip)
	if err != nil {
		e.Problems = append(e.Problems, findingOf(err))
		return ref(nil)
	}
	e.passkeyAlg = st.slip.Issuer.Key.Alg
	state, err := r.passkeyState(st.slip, rec)
	e.passkeyState = state
	if err != nil {
		e.Problems = append(e.Problems, Finding{"cancellation-invalid", "the cancellation was not signed with the passkey the slip names, or its passkey values do not check"})
		return ref(nil)
	}
	if state == stateValid {
		e.Verified = "all"
	}
	if len(e.Problems) > 0 || e.Verified == "none" || !st.verified {
		return ref(nil)
	}
	if st.cancelled {
		e.Notes = append(e.Notes, "the slip had already been cancelled, earlier in the book")
	} else {
		e.Notes = append(e.Notes, "this cancellation has no time-stamp: only its place in the book says when it took effect")
	}
	return ref(st)
}

func (r *reader) readAcknowledgement(e *Entry, v any) {
	e.Kind = KindAcknowledgement
	rec, err := record.Parse(v, "acknowledgement")
	if err != nil {
		e.Problems = append(e.Problems, findingOf(err))
		return
	}
	e.Fingerprint = rec.Fingerprint
	if err := record.ValidateAcknowledgement(rec.Content); err != nil {
		e.Problems = append(e.Problems, findingOf(err))
		return
	}
	c := rec.Content
	e.Slip = str(c, "slip")
	r.noteID(e, str(c, "id"))
	st, err := r.findSlip(e.Slip)
	if err != nil {
		e.Problems = append(e.Problems, findingOf(err))
		return
	}
	if has(c, "pass") {
		e.Problems = append(e.Problems, Finding{"pass-missing", "the acknowledgement names a pass, and passes for helper agents are not supported by this checker"})
		return
	}
	e.signatures = r.keySetSignatures(rec, st.slip.Agent.Keys)
	if overall(e.signatures) == stateInvalid {
		e.Problems = append(e.Problems, Finding{"signature-invalid", "a signature on the acknowledgement does not fit the agent's keys"})
	}
	e.Verified = verifiedBy(e.signatures)
	underConfirmedSlip(e, st)
	named, ok := r.cancellations[str(c, "cancellation")]
	switch {
	case !ok:
		e.Problems = append(e.Problems, Finding{"cancellation-not-found", "the cancellation this acknowledgement names is not earlier in the book"})
	case !named.sound || named.slip != e.Slip:
		e.Problems = append(e.Problems, Finding{"cancellation-not-found", "the cancellation this acknowledgement names did not pass its own check, or cancels another slip"})
	}
}

// facts is what one entry adds to the summary (the reference's summarise).
func (r *reader) facts(e *Entry) (problemFound, skipped bool, missing []string, uncompared bool) {
	problemFound = len(e.Problems) > 0
	note := func(sigs []SigState) {
		if len(sigs) == 0 {
			skipped = true
		}
		for _, s := range sigs {
			if s.State == stateUnavailable {
				missing = append(missing, s.Method)
			}
		}
	}
	switch e.Kind {
	case KindSlip:
		switch e.passkeyState {
		case stateUnavailable:
			missing = append(missing, e.passkeyAlg)
		case stateUnchecked:
			skipped = true
		}
	case KindStub:
		note(e.signatures)
		if e.counterState != stateAbsent {
			note(e.counterSigs)
		}
		if e.approvalState == stateUnavailable {
			missing = append(missing, e.approvalAlg)
		}
		uncompared = !e.Compared
	case KindRefusal, KindAcknowledgement:
		note(e.signatures)
	case KindCancellation:
		switch e.passkeyState {
		case stateUnchecked:
			skipped = true
		case stateUnavailable:
			missing = append(missing, e.passkeyAlg)
		}
	default:
		// Unreadable, and kinds this checker does not read: never checked.
		skipped = true
		uncompared = e.Kind == KindUnreadable || e.Kind == "pass"
	}
	return problemFound, skipped, missing, uncompared
}

func countEntry(c *Counts, e *Entry) {
	switch e.Kind {
	case KindSlip:
		c.Slips++
	case KindStub:
		c.Stubs++
		switch e.counterState {
		case stateAbsent:
			c.OneSided++
		case stateValid:
			c.Countersigned++
		}
		if e.approvalState == stateValid {
			c.Approved++
		}
	case KindRefusal:
		c.Refusals++
	case "terms":
		c.Terms++
	case "seal":
		c.Seals++
	case KindCancellation:
		c.Cancellations++
	case KindAcknowledgement:
		c.Acknowledgements++
	case "vouching":
		c.Vouchings++
	case "pass":
		c.Passes++
	}
}

// note adds one entry to the running summary.
func (r *reader) note(e *Entry) {
	p, skipped, missing, uncompared := r.facts(e)
	if p {
		r.running.problemEntries++
		if r.running.firstProblem == nil {
			r.running.firstProblem = &LineFinding{Line: e.Index + 1, Code: e.Problems[0].Code, Message: e.Problems[0].Message}
		}
	}
	if skipped {
		r.running.skipped = true
	}
	for _, m := range missing {
		r.running.missing[m] = true
	}
	if uncompared {
		r.running.uncompared++
	}
	countEntry(&r.running.counts, e)
}

// summarise is the summary of a whole book (the reference's summarise).
func (r *reader) summarise(entries []Entry, bookProblems []Finding) Summary {
	skipped := len(bookProblems) > 0 || len(entries) == 0
	missing := map[string]bool{}
	problemFound := len(bookProblems) > 0
	allCompared := true
	var s Summary
	for i := range entries {
		e := &entries[i]
		p, sk, m, unc := r.facts(e)
		problemFound = problemFound || p
		skipped = skipped || sk
		for _, x := range m {
			missing[x] = true
		}
		if unc {
			allCompared = false
		}
		if len(e.Breaches) > 0 && s.FirstBreach == nil {
			idx := e.Index
			s.FirstBreach = &idx
		}
		countEntry(&s.Counts, e)
	}
	s.MethodsMissing = []string{}
	for m := range missing {
		s.MethodsMissing = append(s.MethodsMissing, m)
	}
	sort.Strings(s.MethodsMissing)
	s.ProblemFound = problemFound
	s.FullyChecked = !skipped && len(missing) == 0
	s.Intact = !problemFound && s.FullyChecked
	s.WithinSlips = s.FirstBreach == nil && allCompared && !problemFound
	return s
}

func (f Finding) String() string { return fmt.Sprintf("%s: %s", f.Code, f.Message) }
