package book

import (
	"math"

	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
)

// Reading each kind of entry, as the reference's checkXxxEntry functions
// do, in their order of checks and with their codes.

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

// openRecord reads v as a record of kind whose content validate checks, and
// notes in e its fingerprint, its slip and its id, and any fault as a
// problem. rec is nil when v is not a record of kind; ok is false on any
// fault.
func (r *reader) openRecord(e *Entry, v any, kind record.Kind, validate func(map[string]any) error) (rec *record.Record, ok bool) {
	rec, err := r.parseRecord(v, kind)
	if err != nil {
		e.Problems = append(e.Problems, findingOf(err))
		return nil, false
	}
	e.Fingerprint = rec.Fingerprint
	if err := validate(rec.Content); err != nil {
		e.Problems = append(e.Problems, findingOf(err))
		return rec, false
	}
	e.Slip = str(rec.Content, "slip")
	r.noteID(e, str(rec.Content, "id"))
	e.stated(timeOf(rec.Content, "when"))
	return rec, true
}

// stated notes a time the entry states (seconds; math.MinInt64 for none):
// the entry's time is the latest of them.
func (e *Entry) stated(sec int64) {
	if sec == math.MinInt64 {
		return
	}
	if ms := sec * 1000; !e.hasWhen || ms > e.when {
		e.when, e.hasWhen = ms, true
	}
}

// slipOf finds the slip e relies on; nil, with the problem noted, when it is
// missing or unusable.
func (r *reader) slipOf(e *Entry) *slipState {
	st, err := r.findSlip(e.Slip)
	if err != nil {
		e.Problems = append(e.Problems, findingOf(err))
		return nil
	}
	return st
}

// signedBy checks the signatures on rec against keys, noting the problem
// "signature-invalid" (with the words unfit) when one does not fit, and
// what e shows under the slip st.
func (r *reader) signedBy(e *Entry, rec *record.Record, keys jwk.KeySet, unfit string, st *slipState) {
	e.signatures = r.keySetSignatures(rec, keys)
	if overall(e.signatures) == stateInvalid {
		e.Problems = append(e.Problems, Finding{"signature-invalid", unfit})
	}
	e.Verified = verifiedBy(e.signatures)
	underConfirmedSlip(e, st)
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
				chain:    chain{lastWhen: math.MinInt64}, tally: newTally(),
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
	rec, ok := r.openRecord(e, v["stub"], "stub", record.ValidateStub)
	if !ok {
		return nil
	}
	c := rec.Content
	if r.expectSlip != "" && (e.Slip != r.expectSlip || str(c, "pass") != r.expectPass) {
		e.Problems = append(e.Problems, Finding{"check-failed", "the stub is not under the slip and the pass its call was reserved under"})
		return nil
	}
	st := r.slipOf(e)
	if st == nil {
		return nil
	}
	// A helper's stub names the pass it acts under: it is signed with the
	// helper's keys, and sits in the helper's own chain.
	keys, unfit, ch := st.slip.Agent.Keys, "a signature on the stub does not fit the agent's keys", &st.chain
	var ps *passState
	if has(c, "pass") {
		var err error
		if ps, err = r.findPass(str(c, "pass"), e.Slip); err != nil {
			e.Problems = append(e.Problems, findingOf(err))
			return nil
		}
		e.Pass = ps.fingerprint
		keys, unfit, ch = ps.pass.To.Keys, "a signature on the stub does not fit the keys of the helper agent the pass names", &ps.chain
	}
	r.signedBy(e, rec, keys, unfit, st)

	q := requestOf(c)
	seq := ch.check(e, c, q.when)

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
		if err := r.checkStubApproval(e, v["approval"], c, st, q); err != nil {
			e.Problems = append(e.Problems, findingOf(err))
		}
	} else if has(c, "approval") {
		e.Problems = append(e.Problems, Finding{"approval-not-found", "the stub names an approval that is not with it"})
	}
	if has(c, "terms") {
		e.Problems = append(e.Problems, Finding{"terms-not-found", "the stub relies on a service's terms, and terms are not supported by this checker"})
	}

	var effects []effect
	var passEffects []passEffect
	if len(e.Problems) == 0 && e.Verified != "none" && st.verified {
		effects, passEffects = compareStub(e, st, ps, q, svc)
	}
	fingerprint, index, compared := rec.Fingerprint, e.Index, e.Compared
	return func() {
		ch.next, ch.last, ch.lastWhen = seq+1, fingerprint, q.when
		if compared {
			st.tally.apply(effects, q.when, index)
			for _, pe := range passEffects {
				pe.pass.tally.apply(pe.effects, q.when, index)
			}
			if ps != nil {
				ps.own[index] = true
			}
		}
	}
}

// check notes in e where a stub of content c, dated when, breaks the chain
// (§7), and returns its seq: the reader carries on from it, so that one
// break is reported once.
func (ch *chain) check(e *Entry, c map[string]any, when int64) int64 {
	seq := whole(c, "seq")
	if seq != ch.next || (seq > 0 && str(c, "previous") != ch.last) {
		e.Problems = append(e.Problems, Finding{"chain-broken", "the chain is broken here: a stub is missing, moved, repeated or changed"})
	}
	if when < ch.lastWhen {
		e.Problems = append(e.Problems, Finding{"time-went-backwards", "this stub is dated before the stub ahead of it"})
	}
	return seq
}

// checkStubApproval checks the approval v that comes with the stub whose
// content is c, and records its state in e.
func (r *reader) checkStubApproval(e *Entry, v any, c map[string]any, st *slipState, q request) error {
	if !has(c, "approval") {
		return problemf("approval-mismatch", "the stub does not name the approval that is with it")
	}
	a, err := r.checkApproval(v, c, e.Slip, st, r)
	if err != nil {
		return err
	}
	e.approvalState, e.approvalAlg = a.state, a.alg
	e.stated(a.when)
	if a.when > q.when+clockAllowance {
		return problemf("approval-dated-after-stub", "the approval is dated later than the stub that carries it")
	}
	return nil
}

// compareStub compares a sound stub with its slip and, for a helper's stub
// (ps not nil), with its pass and every pass above it; it records the
// breaches and needs in e, and returns the stub's effects on the slip's
// tally and on each pass's. A helper's findings come in the reference's
// order: those of the passes (none with a code the slip gives), the pass
// one too many, then the slip's.
func compareStub(e *Entry, st *slipState, ps *passState, q request, svc *service) ([]effect, []passEffect) {
	e.Compared = true
	shown := compareWithSlip(st.rules, committedView{st.tally}, q, svc, st.cancelled, forChecker)
	var passEffects []passEffect
	if ps != nil {
		var added []Finding
		added, passEffects = comparePasses(ps, func(p *passState) view { return committedView{p.tally} }, q, svc, forChecker, shown.breaches)
		e.Breaches = append(e.Breaches, added...)
		if ps.notAllowed {
			e.Breaches = append(e.Breaches, Finding{"pass-not-allowed", "this stub was written under a pass that the slip does not allow"})
		}
	}
	e.Breaches = append(e.Breaches, shown.breaches...)
	e.Needs = shown.needs
	if contains(shown.needs, "countersignature") && e.counterState == stateAbsent {
		e.Breaches = append(e.Breaches, Finding{"countersignature-missing", "the slip asks for the other side to countersign this action, and there is no countersignature"})
	}
	if contains(shown.needs, "approval") && e.approvalState == stateAbsent {
		e.Breaches = append(e.Breaches, Finding{"approval-missing", "the slip asks for the person's own approval of this action, and there is none"})
	}
	return shown.effects, passEffects
}

func (r *reader) checkCountersignature(e *Entry, v any, stubFingerprint string, svc *service) error {
	rec, err := r.parseRecord(v, "countersignature")
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
	e.stated(timeOf(rec.Content, "when"))
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
	rec, ok := r.openRecord(e, v, "refusal", record.ValidateRefusal)
	if !ok {
		return
	}
	st := r.slipOf(e)
	if st == nil {
		return
	}
	by, _ := rec.Content["by"].(map[string]any)
	keys, err := jwk.CheckKeySet(by["keys"])
	if err != nil {
		e.Problems = append(e.Problems, findingOf(err))
		return
	}
	r.signedBy(e, rec, keys, "a signature on the refusal does not fit the keys the refusal gives", st)
}

func (r *reader) readCancellation(e *Entry, v any) func() {
	e.Kind = KindCancellation
	e.passkeyState = stateUnchecked
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
	rec, ok := r.openRecord(e, v, "cancellation", slip.ValidateCancellation)
	if rec == nil {
		return nil
	}
	if !ok {
		return ref(nil)
	}
	st := r.slipOf(e)
	if st == nil {
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
	rec, ok := r.openRecord(e, v, "acknowledgement", record.ValidateAcknowledgement)
	if !ok {
		return
	}
	c := rec.Content
	st := r.slipOf(e)
	if st == nil {
		return
	}
	keys, unfit := st.slip.Agent.Keys, "a signature on the acknowledgement does not fit the agent's keys"
	if has(c, "pass") {
		ps, err := r.findPass(str(c, "pass"), e.Slip)
		if err != nil {
			e.Problems = append(e.Problems, findingOf(err))
			return
		}
		e.Pass = ps.fingerprint
		keys, unfit = ps.pass.To.Keys, "a signature on the acknowledgement does not fit the keys of the helper agent the pass names"
	}
	r.signedBy(e, rec, keys, unfit, st)
	named, ok := r.cancellations[str(c, "cancellation")]
	switch {
	case !ok:
		e.Problems = append(e.Problems, Finding{"cancellation-not-found", "the cancellation this acknowledgement names is not earlier in the book"})
	case !named.sound || named.slip != e.Slip:
		e.Problems = append(e.Problems, Finding{"cancellation-not-found", "the cancellation this acknowledgement names did not pass its own check, or cancels another slip"})
	}
}
