package book

import (
	"fmt"
	"math"

	"github.com/seed-6e06167c/mcp-executor/receipts/pass"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// Passes (format description, section 25): an agent hands part of its
// permission to a helper agent. A pass sits in the book after its slip and
// after the pass it names in "from"; a helper's stubs name their pass,
// are signed with its "to.keys" and form a chain of their own. Each is
// compared with the slip, with its own pass and with every pass above
// that one (at most ten), and a pass's totals take in the stubs under it
// and under every pass handed on from it.

// passState is what the reader keeps for one pass: whether it can be
// relied on, where it stands in the line of passes, the helper's chain and
// the pass's running totals.
type passState struct {
	fingerprint string
	pass        *pass.Pass
	slip        *slipState
	parent      *passState // the pass named in "from"; nil for the slip's own agent's
	level       int        // 1 for a pass from the slip's own agent
	// notAllowed: the pass, or one above it, is one more in a row than the
	// slip allows; every stub under it is reported.
	notAllowed bool
	usable     bool // the pass passed its own check
	rules      *rules
	chain      // the helper's own chain
	tally      *tally
	// own are the entries of the stubs written under this very pass (not
	// under a pass handed on from it): their findings name it "the pass",
	// the others "the earlier pass".
	own map[int]bool
}

// rulesOfPass reads a pass as a slip, so that the same comparison can be
// made with it: its actions, its limits and its times; no conditions, no
// stated rules, and its services are the slip's.
func rulesOfPass(p *pass.Pass, slipRules *rules) *rules {
	r := &rules{
		actions:    make(map[string]bool, len(p.Actions)),
		never:      map[string]bool{},
		with:       slipRules.with,
		validFrom:  p.ValidFrom.Unix(),
		validUntil: p.ValidUntil.Unix(),
	}
	for _, a := range p.Actions {
		r.actions[a] = true
	}
	for _, l := range p.Limits {
		r.limits = append(r.limits, limit{action: l.Action, kind: l.Kind, value: l.Value, per: l.Per, unit: l.Unit})
	}
	return r
}

// findPass is the pass an entry under slip relies on (the reference's
// findPass).
func (r *reader) findPass(fingerprint, slip string) (*passState, error) {
	ps := r.passes[fingerprint]
	if ps == nil || !ps.usable {
		return nil, problemf("pass-missing", "the pass this entry relies on is not earlier in the book, or did not pass its own check")
	}
	if ps.pass.Slip != slip {
		return nil, problemf("pass-mismatch", "the pass this entry relies on was given under another slip")
	}
	return ps, nil
}

// readPass reads a pass entry (the reference's checkPassEntry), in its
// order of checks and with its codes.
func (r *reader) readPass(e *Entry, v any) func() {
	e.Kind = KindPass
	rec, ok := r.openRecord(e, v, record.Pass, pass.ValidateContent)
	if !ok {
		return nil
	}
	p, err := pass.Parse(rec.Content)
	if err != nil { // validated already; never
		e.Problems = append(e.Problems, findingOf(err))
		return nil
	}
	st := r.slipOf(e)
	if st == nil {
		return nil
	}
	var parent *passState
	if p.From != "" {
		if parent, err = r.findPass(p.From, p.Slip); err != nil {
			e.Problems = append(e.Problems, findingOf(err))
			return nil
		}
	}
	// Who may pass on: the slip's own agent, or the helper of the pass before.
	keys := st.slip.Agent.Keys
	if parent != nil {
		keys = parent.pass.To.Keys
	}
	r.signedBy(e, rec, keys, "a signature on the pass does not fit the keys of the agent that passes on", st)
	level := 1
	if parent != nil {
		level = parent.level + 1
	}
	if level > pass.MaxDepth {
		e.Problems = append(e.Problems, Finding{"pass-too-deep", "a permission may be passed on at most ten times in a row, and this pass is one more"})
	}
	notAllowed := parent != nil && parent.notAllowed
	if len(e.Problems) == 0 && e.Verified != "none" && st.verified {
		e.Compared = true
		notAllowed = passBreaches(e, p, st, parent, level) || notAllowed
	}
	if r.passes[rec.Fingerprint] != nil {
		e.Problems = append(e.Problems, Finding{"duplicate-id", "this pass is already in the book"})
		return nil
	}
	add := &passState{
		fingerprint: rec.Fingerprint, pass: p, slip: st, parent: parent, level: level,
		notAllowed: notAllowed, usable: len(e.Problems) == 0, rules: rulesOfPass(p, st.rules),
		chain: chain{lastWhen: math.MinInt64}, tally: newTally(), own: map[int]bool{},
	}
	return func() {
		r.passes[add.fingerprint] = add
		r.passOrder = append(r.passOrder, add)
	}
}

// passBreaches records what a sound pass shows about the agent that
// passed on: one more in a row than the slip allows, more than its writer
// holds, dated outside its writer's time, after the slip was cancelled. It
// reports whether the pass is one the slip does not allow.
func passBreaches(e *Entry, p *pass.Pass, st *slipState, parent *passState, level int) (notAllowed bool) {
	held := st.rules
	if parent != nil {
		held = parent.rules
	}
	if allowed := st.slip.Passes; int64(level) > allowed {
		notAllowed = true
		msg := "the slip does not allow its permission to be passed on"
		switch {
		case allowed == 1:
			msg = "the slip allows its permission to be passed on once, and this is one more"
		case allowed > 1:
			msg = fmt.Sprintf("the slip allows its permission to be passed on %d times, and this is one more", allowed)
		}
		e.Breaches = append(e.Breaches, Finding{"pass-not-allowed", msg})
	}
	wider := p.ValidFrom.Unix() < held.validFrom || p.ValidUntil.Unix() > held.validUntil
	for _, a := range p.Actions {
		wider = wider || !held.actions[a]
	}
	if wider {
		e.Breaches = append(e.Breaches, Finding{"pass-wider", "the pass hands on more than the agent that wrote it holds: an action, or a time, outside its own permission"})
	}
	if when := p.When.Unix(); when < held.validFrom || when >= held.validUntil {
		e.Breaches = append(e.Breaches, Finding{"outside-valid-time", "the pass is dated outside the time its writer's own permission allows"})
	}
	if st.cancelled {
		e.Breaches = append(e.Breaches, Finding{"after-cancellation", "the person cancelled the slip before this pass"})
	}
	return notAllowed
}

// passEffect is what one stub, or one call in flight, adds to the totals
// of one pass above it.
type passEffect struct {
	pass    *passState
	effects []effect
}

// comparePasses compares a helper's sound stub, or a proposed action under
// a pass, with its pass and every pass above it, each with its own totals
// (v gives the view of a pass's tally), after the slip's comparison gave
// given. A finding with a code already given is not given again. It
// returns the new findings, in order, and the effects on each pass's
// totals.
func comparePasses(ps *passState, v func(*passState) view, q request, svc *service, m mode, given []Finding) ([]Finding, []passEffect) {
	var added []Finding
	effects := make([]passEffect, 0, ps.level)
	for p := ps; p != nil; p = p.parent {
		who := whoEarlierPass
		if p == ps {
			who = whoPass
		}
		under := compareWith(p.rules, v(p), q, svc, false, m, who)
		effects = append(effects, passEffect{p, under.effects})
		for _, b := range under.breaches {
			if hasCode(given, b.Code) || hasCode(added, b.Code) {
				continue
			}
			added = append(added, b)
		}
	}
	return added, effects
}

func hasCode(list []Finding, code string) bool {
	for _, f := range list {
		if f.Code == code {
			return true
		}
	}
	return false
}

// settlePassPeriods gives, once every stub was read, the findings of each
// pass's limits "in any period" (the reference's settleLate): the passes
// from the last in the book to the first, so from the pass nearest a stub
// upwards, and none for a stub that already has an over-period-limit
// finding (from its slip, or from a pass nearer it).
func (r *reader) settlePassPeriods(over map[int]bool, breach func(entry int, f Finding)) {
	for i := len(r.passOrder) - 1; i >= 0; i-- {
		ps := r.passOrder[i]
		who := func(entry int) string {
			if ps.own[entry] {
				return whoPass
			}
			return whoEarlierPass
		}
		settlePeriodsFn(ps.rules, ps.tally, who, func(entry int, f Finding) {
			if over[entry] {
				return
			}
			over[entry] = true
			breach(entry, f)
		})
	}
}

// settlePeriods gives every stub whose period holds more than a limit
// allows its finding, once every stub was read: the slips' limits first,
// then the passes' (settlePassPeriods).
func (r *reader) settlePeriods(breach func(entry int, f Finding)) {
	slipWho := func(int) string { return whoSlip }
	var over map[int]bool // the stubs given an over-period-limit finding; kept only where passes are
	if len(r.passOrder) > 0 {
		over = map[int]bool{}
	}
	for _, st := range r.slipOrder {
		if st.rules != nil {
			settlePeriodsFn(st.rules, st.tally, slipWho, func(i int, f Finding) {
				if over != nil {
					over[i] = true
				}
				breach(i, f)
			})
		}
	}
	if over != nil {
		r.settlePassPeriods(over, breach)
	}
}
