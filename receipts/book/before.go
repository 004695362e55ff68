package book

import (
	"math"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// Proposal is an action the agent is about to take (format description,
// section 20).
type Proposal struct {
	Slip    string         // the slip's fingerprint
	Action  string         // the action name
	Amount  *record.Amount // nil: none
	With    string         // the service's id as the slip names it; "" for none
	Details []record.Detail
	// When the action is taken; the zero time means now. Times are whole
	// seconds: anything finer is dropped, as the stub will state it.
	When time.Time
	// Approval is the person's signed approval of exactly this action,
	// where the slip asks for one.
	Approval *record.Record
	// Pass is, for a helper agent's action, the fingerprint of the pass it
	// acts under (in the book); "" for the slip's own agent. The action is
	// then checked against the slip, the pass and every pass above it, and
	// dated against the helper's own chain.
	Pass string

	// From ProposalFromValue: a fault found in the proposal's shape, and the
	// approval exactly as handed over, both reported in the reference's order.
	fault         error
	approvalValue any
	pass          bool // named a pass (of any form)
	terms         bool // named terms, which this package never holds
}

// Decision is the answer of the check before acting.
type Decision struct {
	// Allowed is true only when the record so far is sound, every signature
	// in it was checked here, and the action would be inside the slip.
	Allowed  bool      `json:"allowed"`
	Problems []Finding `json:"problems"`
	Breaches []Finding `json:"breaches"`
	// Needs lists what the slip asks to go with the action: "approval"
	// and/or "countersignature". A needed countersignature does not block
	// the action: the stub is inside the slip only if one is then obtained.
	Needs []string `json:"needs"`
}

// Reason is the refusal reason (format description, section 18) for a
// decision that does not allow the action: the first finding mapped to
// not-in-slip, over-limit, outside-valid-time, needs-approval, or
// slip-not-sound for a problem with the record or the request. §18 has no
// reason of its own for a helper's action: one outside its pass (or a
// pass above) gets the reason the same finding against the slip gets
// (an action the pass does not hand on: not-in-slip; a pass's limit:
// over-limit; a pass expired: outside-valid-time), and a pass that is not
// in the book, is under another slip or is one more than the slip allows
// is not-in-slip.
func (d Decision) Reason() string {
	codes := []string{}
	for _, f := range d.Problems {
		codes = append(codes, f.Code)
	}
	for _, f := range d.Breaches {
		codes = append(codes, f.Code)
	}
	for _, c := range codes {
		switch c {
		case "action-not-allowed", "party-not-allowed", "prohibited", "after-cancellation", "countersignature-missing",
			"pass-not-allowed", "pass-missing", "pass-mismatch":
			return "not-in-slip"
		case "over-limit", "over-each-limit", "over-count-limit", "over-period-limit", "amount-missing":
			return "over-limit"
		case "outside-valid-time":
			return "outside-valid-time"
		case "approval-missing":
			return "needs-approval"
		}
	}
	return "slip-not-sound"
}

func (p Proposal) content() map[string]any {
	when := p.When
	if when.IsZero() {
		when = time.Now()
	}
	c := map[string]any{"action": p.Action, "when": canon.FormatTime(when)}
	if p.Amount != nil {
		c["amount"] = p.Amount.Canonical()
	}
	if p.With != "" {
		c["with"] = p.With
	}
	if p.Details != nil {
		c["details"] = record.DetailsValue(p.Details)
	}
	return c
}

func (p Proposal) approval() (any, bool) {
	if p.approvalValue != nil {
		return p.approvalValue, true
	}
	if p.Approval != nil {
		return p.Approval.Value(), true
	}
	return nil, false
}

// An upper bound on the line the record of an action makes: the stub with
// its two signatures, the approval, and the countersignature.
const (
	stubBound             = 6700 + 600
	countersignatureBound = 6900
)

func lineBound(c map[string]any, approval any, hasApproval bool) int {
	approvalBytes := 0
	if hasApproval {
		if b, err := canon.Marshal(approval); err == nil {
			approvalBytes = len(b)
		}
	}
	b, _ := canon.Marshal(c)
	return (len(b)*4+2)/3 + stubBound + approvalBytes + countersignatureBound + 64
}

// flight is what the check before acting counts beside the book: the
// calls still in flight under the slip, and the approvals they use.
type flight struct {
	calls     []*Reservation
	approvals map[string]bool
	lines     int
	quick     bool // use the ledger's quicker periods
}

// overlay notes an approval's id for one proposal without changing the
// reader.
type overlay struct {
	r   *reader
	f   *flight
	ids []string
}

func (o *overlay) hasID(id string) bool { return o.r.hasID(id) || contains(o.ids, id) }
func (o *overlay) hasApproval(id string) bool {
	return o.r.hasApproval(id) || o.f.approvals[id] || contains(o.ids, id)
}
func (o *overlay) noteApproval(id string) { o.ids = append(o.ids, id) }

// decided is a decision with what a reservation needs of it.
type decided struct {
	Decision
	slip        *slipState
	pass        *passState // the helper's pass; nil for the slip's own agent
	when        int64
	effects     []effect
	passEffects []passEffect // on the pass and every pass above it
	approvalID  string
}

func notSound(format string, a ...any) error { return problem.New("record-not-sound", format, a...) }

// decide is the check before acting (the reference's guard.js decide), in
// the reference's order of tests and with its codes.
func (r *reader) decide(p Proposal, fl *flight) decided {
	out := decided{Decision: Decision{Problems: []Finding{}, Breaches: []Finding{}, Needs: []string{}}}
	if err := r.decideInto(&out, p, fl); err != nil {
		out.Allowed = false
		out.Problems = append(out.Problems, findingOf(err))
	}
	return out
}

// bookReady says why the record so far cannot be acted on, if it cannot:
// no trusted passkey, a problem found, a signature or a stub not checked
// here, or no room left.
func (r *reader) bookReady(fl *flight) error {
	if len(r.opts.IssuerKeys) == 0 {
		return notSound("the check before acting must be told which passkeys it trusts: a slip signed by any other key allows nothing")
	}
	if r.failure != nil || r.size == 0 || r.running.problemEntries > 0 {
		return notSound("a problem was found in the record so far; it must be looked at before the agent acts again")
	}
	if r.running.skipped || len(r.running.missing) > 0 {
		return notSound("this device could not check every signature in the record so far")
	}
	if r.running.uncompared > 0 {
		return notSound("this device could not compare every stub in the record so far with its slip")
	}
	if r.size+fl.lines >= MaxEntries {
		return problem.New("too-large", "the book is full: it holds 100,000 entries")
	}
	return nil
}

// decideInto runs decide's tests on the proposal itself, filling out; an
// error is the problem that refuses it.
func (r *reader) decideInto(out *decided, p Proposal, fl *flight) error {
	if err := r.bookReady(fl); err != nil {
		return err
	}
	if p.fault != nil {
		return p.fault
	}
	c := p.content()
	if err := validateRequest(c); err != nil {
		return err
	}
	q := requestOf(c)
	approvalValue, hasApproval := p.approval()
	if lineBound(c, approvalValue, hasApproval) > MaxLineBytes {
		return problem.New("too-large", "the record of this action would be longer than a line of a book may be")
	}
	st := r.slips[p.Slip]
	if st == nil {
		return problem.New("slip-missing", "the slip is not in the book")
	}
	if !st.verified {
		return notSound("this device could not check the slip's signature")
	}
	// A helper agent acts under a pass, in a chain of its own.
	ps, err := r.proposedPass(p)
	if err != nil {
		return err
	}
	ch := &st.chain
	if ps != nil {
		ch = &ps.chain
	}
	lastWhen := ch.lastWhen
	for _, call := range fl.calls {
		if call.pass == p.Pass && call.when > lastWhen {
			lastWhen = call.when
		}
	}
	if q.when < lastWhen {
		return problem.New("time-went-backwards", "the action is dated before the last stub in its chain")
	}
	if p.terms {
		return problem.New("terms-not-found", "the proposal names a service's terms, and terms are not supported by this checker")
	}
	svc := st.rules.with[q.with]
	if !q.hasWith {
		svc = nil
	}
	var v view = committedView{st.tally}
	if fl.quick {
		v = flightView{t: st.tally, flight: fl.calls}
	}
	shown := compareWithSlip(st.rules, v, q, svc, st.cancelled, forBefore)
	out.Needs = append(out.Needs, shown.needs...)
	out.slip, out.pass, out.when, out.effects = st, ps, q.when, shown.effects
	breaches := shown.breaches
	if ps != nil {
		breaches = out.underPass(ps, fl, q, svc, breaches)
	}
	if hasApproval {
		o := &overlay{r: r, f: fl}
		a, err := r.checkApproval(approvalValue, c, p.Slip, st, o)
		if err != nil {
			return err
		}
		if a.state != stateValid {
			return notSound("this device could not check the approval's signature")
		}
		if a.when > q.when+clockAllowance {
			return problem.New("approval-dated-after-stub", "the approval is dated later than the action")
		}
		out.approvalID = a.id
	} else if contains(shown.needs, "approval") {
		breaches = append(breaches, Finding{"approval-missing", "the slip asks for the person's own approval of this action, and none was handed to this check"})
	}
	if contains(shown.needs, "countersignature") && (svc == nil || svc.keys == nil) {
		breaches = append(breaches, Finding{"countersignature-missing", "the slip asks for the other side to countersign this action, and the action names no service whose keys the slip gives: no countersignature could be given"})
	}
	out.Breaches = append(out.Breaches, breaches...)
	out.Allowed = len(breaches) == 0
	return nil
}

// CheckBefore asks whether an action would be outside its slip, reading
// the whole book text afresh: the reference's checkBefore. The ledger
// (Book.Ledger) gives the same answer without reading the book again.
func CheckBefore(text []byte, p Proposal, opts Options) Decision {
	r := readAll(text, opts, false)
	if r.failure == nil {
		root := r.tree.root()
		if (opts.ExpectedRoot != "" && opts.ExpectedRoot != canon.B64(root[:])) || (opts.ExpectedSize != nil && *opts.ExpectedSize != r.size) {
			r.failure = &Finding{"root-mismatch", "the book is not the one expected"}
		}
	}
	return r.decide(p, &flight{}).Decision
}

// readAll reads a whole book text into a fresh reader.
func readAll(text []byte, opts Options, keep bool) *reader {
	r := newReader(opts, keep)
	lines, err := splitLines(text)
	if err != nil {
		f := findingOf(err)
		r.failure = &f
		return r
	}
	for _, line := range lines {
		_, _ = r.readLine(line, false)
	}
	return r
}

// ProposalFromValue reads a proposal given as a JSON-like value, as the
// reference takes it: {slip, action, amount?, with?, details?, when?
// (milliseconds), approval?}. A member it does not know, or one of the
// wrong form, is kept as the fault "bad-field" and reported where the
// reference reports it.
func ProposalFromValue(v map[string]any) Proposal {
	var p Proposal
	known := map[string]bool{"action": true, "slip": true, "amount": true, "approval": true, "details": true, "pass": true, "terms": true, "when": true, "with": true}
	for name := range v {
		if !known[name] {
			p.fault = problem.New("bad-field", "proposal.%s is not a member a proposal may have", name)
		}
	}
	if p.fault == nil && (!has(v, "slip") || !has(v, "action")) {
		p.fault = problem.New("bad-field", "a proposal needs slip and action")
	}
	p.pass, p.terms = has(v, "pass"), has(v, "terms")
	p.Pass, _ = v["pass"].(string)
	p.Slip, _ = v["slip"].(string)
	p.Action, _ = v["action"].(string)
	p.With, _ = v["with"].(string)
	if a, ok := v["amount"].(map[string]any); ok {
		p.Amount = &record.Amount{Unit: str(a, "unit"), Value: whole(a, "value")}
	}
	if d, ok := v["details"].([]any); ok {
		p.Details = []record.Detail{}
		for _, x := range d {
			m, _ := x.(map[string]any)
			p.Details = append(p.Details, record.Detail{Name: str(m, "name"), SHA256: str(m, "sha256")})
		}
	}
	switch ms := v["when"].(type) {
	case int64:
		p.When = time.UnixMilli(ms).UTC()
	case float64:
		p.When = time.UnixMilli(int64(math.Floor(ms))).UTC()
	}
	if a, ok := v["approval"]; ok {
		p.approvalValue = a
	}
	return p
}

// underPass compares a helper's proposed action with the pass it acts
// under and every pass above it, as the checker compares them, after the
// slip's comparison gave breaches; each pass's own totals count the calls
// in flight under it and under every pass handed on from it. It returns
// the breaches with those of the passes added, and notes the effects.
func (out *decided) underPass(ps *passState, fl *flight, q request, svc *service, breaches []Finding) []Finding {
	passView := func(lvl *passState) view {
		if fl.quick {
			return flightView{t: lvl.tally, flight: fl.calls, pass: lvl}
		}
		return committedView{lvl.tally}
	}
	var added []Finding
	added, out.passEffects = comparePasses(ps, passView, q, svc, forBefore, breaches)
	breaches = append(breaches, added...)
	if ps.notAllowed {
		breaches = append(breaches, Finding{"pass-not-allowed", "the slip does not allow the pass this action would be taken under"})
	}
	return breaches
}

// proposedPass is the pass a proposal names, as the reference's guard
// finds it: nil for none; "pass-missing" when it is not in the book or did
// not pass its check, "pass-mismatch" when it is under another slip.
func (r *reader) proposedPass(p Proposal) (*passState, error) {
	if p.Pass == "" && !p.pass {
		return nil, nil
	}
	ps := r.passes[p.Pass]
	if ps == nil || !ps.usable {
		return nil, problem.New("pass-missing", "the pass is not in the book, or did not pass its own check")
	}
	if ps.pass.Slip != p.Slip {
		return nil, problem.New("pass-mismatch", "the pass was given under another slip")
	}
	return ps, nil
}
