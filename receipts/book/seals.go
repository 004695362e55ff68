package book

import (
	"math"
	"slices"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/receipts/seal"
	"github.com/seed-6e06167c/mcp-executor/receipts/stamp"
)

// clockAllowanceMS is the 300 s allowance in milliseconds, as time-stamps
// state their times.
const clockAllowanceMS = clockAllowance * 1000

// minTime stands for "no time" in milliseconds.
const minTime = math.MinInt64

// Problem codes of seals and time-stamps.
const (
	CodeSealMismatch      = "seal-mismatch"
	CodeSealChainBroken   = "seal-chain-broken"
	CodeSealerNotExpected = "sealer-not-expected"
	CodeDatedAfterStamp   = "dated-after-stamp"
)

// sealState is what the reader keeps of the seals so far (the reference's
// "seals"), and of the entries a later seal's time-stamp may cover.
type sealState struct {
	last      string // fingerprint of the last seal, "" for none
	lastIndex int    // its entry
	lastWhen  int64  // ms; math.MinInt64 for none
	// lastStampTime is the latest time a counted time-stamp from a service
	// gave a seal so far (ms); hasStamp says there is one.
	lastStampTime int64
	hasStamp      bool
	// latest is the latest time a sound entry so far states (ms).
	latest int64
	// stated and existedBy are, for each entry so far, the time it states
	// (math.MinInt64 for none) and the earliest time a counted time-stamp
	// after it shows it existed by (math.MaxInt64 for none).
	stated    []int64
	existedBy []int64
	dated     []bool // already found dated after a stamp
	sealed    *Sealed
	services  map[string]ServiceSeal
	uncounted []UncountedStamp
}

func newSealState() sealState {
	return sealState{lastWhen: math.MinInt64, latest: math.MinInt64, services: map[string]ServiceSeal{}}
}

// readSeal reads a seal line (§21.1, §21.2): its record, the three
// signatures, the recorder's keys, the tree of the entries before it, the
// chain of seals, its dates, and its time-stamps. What it changes in the
// reader's state comes back as the commit.
func (r *reader) readSeal(e *Entry, obj map[string]any) func() {
	e.Kind = KindSeal
	e.Seal = &SealDetails{}
	rec, err := r.parseRecord(obj["seal"], record.Seal)
	if err != nil {
		e.Problems = append(e.Problems, findingOf(err))
		return nil
	}
	e.Fingerprint = rec.Fingerprint
	if err := record.ValidateSeal(rec.Content); err != nil {
		e.Problems = append(e.Problems, findingOf(err))
		return nil
	}
	c := rec.Content
	r.noteID(e, str(c, "id"))
	by, _ := c["by"].(map[string]any)
	keys, _ := jwk.CheckSealKeySet(by["keys"]) // ValidateSeal has confirmed them
	e.signatures = r.sealSignatures(rec, keys)
	if overall(e.signatures) == stateInvalid {
		e.Problems = append(e.Problems, Finding{"signature-invalid", "a signature on the seal does not fit the keys the seal gives"})
	}
	e.Verified = verifiedBy(e.signatures)
	e.Seal.Sealer = keys.Fingerprint()
	if r.opts.SealKeys != nil {
		if !slices.Contains(r.opts.SealKeys, e.Seal.Sealer) {
			e.Problems = append(e.Problems, Finding{CodeSealerNotExpected, "the seal was signed with keys other than the ones expected"})
		}
	} else {
		e.Notes = append(e.Notes, "the keys that signed this seal were not compared with keys you already trust; the name on the seal is only a label")
	}

	s := &r.seals
	when := timeOf(c, "when") * 1000
	e.stated(timeOf(c, "when"))
	floor := r.sealPlace(e, c, when)

	// The time-stamps, read only for a seal whose own signatures did not fail.
	var stampedTime *int64
	if _, has := obj["stamps"]; has {
		items, err := seal.DecodeStamps(obj["stamps"])
		if err != nil {
			e.Problems = append(e.Problems, findingOf(err))
			return r.sealCommit(e, rec.Fingerprint, when, false, nil, int(whole(c, "size")))
		}
		if overall(e.signatures) != stateInvalid {
			stampedTime = r.checkStamps(e, items, rec.Fingerprint, when, e.Verified == "all", floor)
		}
	}
	credited := len(e.Problems) == 0 && e.Verified == "all" && stampedTime != nil
	if stampedTime != nil && len(e.Problems) == 0 && e.Verified != "all" {
		e.Notes = append(e.Notes, "the time-stamp beside this seal was not counted: this device could not check all three of the seal's signatures")
	}
	// A seal dated before an entry it covers: one of the two dates is not as
	// it says. Where a counted time-stamp settles which, the entry is
	// marked instead (below).
	if s.latest > when+clockAllowanceMS && r.datedBeforeCovered(when, credited, stampedTime) {
		e.Problems = append(e.Problems, Finding{"time-went-backwards", "this seal is dated before an entry it covers; one of the two dates is not as it says"})
	}
	if !credited || len(e.Problems) > 0 {
		return r.sealCommit(e, rec.Fingerprint, when, false, nil, int(whole(c, "size")))
	}
	if service := serviceTime(e); service != nil {
		if s.hasStamp && *service < s.lastStampTime-clockAllowanceMS {
			e.Problems = append(e.Problems, Finding{"time-went-backwards", "this seal's time-stamp is earlier than the time-stamp of a seal before it"})
			return r.sealCommit(e, rec.Fingerprint, when, false, nil, int(whole(c, "size")))
		}
	}
	e.Seal.StampedAt = formatMS(*stampedTime)
	return r.sealCommit(e, rec.Fingerprint, when, true, stampedTime, int(whole(c, "size")))
}

// sealPlace holds a seal (content c, dated when, in ms) to the entries
// before it and to the seals before it (§21.1, rules 2 to 4), and returns
// the floor: the latest time a service gave a seal before it
// (math.MinInt64 for none).
func (r *reader) sealPlace(e *Entry, c map[string]any, when int64) int64 {
	s := &r.seals
	root := r.tree.root()
	if whole(c, "size") != int64(r.size) || str(c, "root") != canon.B64(root[:]) {
		e.Problems = append(e.Problems, Finding{CodeSealMismatch, "the seal does not fit the entries before it: an entry was changed, added or removed after the seal was made"})
	}
	if str(c, "previous") != s.last {
		e.Problems = append(e.Problems, Finding{CodeSealChainBroken, "the seal does not name the seal before it: a seal is missing, moved or changed"})
	}
	if when < s.lastWhen {
		e.Problems = append(e.Problems, Finding{"time-went-backwards", "this seal is dated before the seal ahead of it"})
	}
	floor := int64(math.MinInt64)
	if s.hasStamp {
		floor = s.lastStampTime
		if when < floor-clockAllowanceMS {
			e.Problems = append(e.Problems, Finding{"time-went-backwards", "this seal is dated before the time that a time-stamp service gave a seal that comes before it; it covers that seal and its time-stamp, so it cannot have been made by then"})
		}
	}
	return floor
}

// sealCommit is what a seal line changes once it is taken: the chain of
// seals, and, for a counted time-stamp, the entries it covers.
func (r *reader) sealCommit(e *Entry, fingerprint string, when int64, credited bool, stampedTime *int64, size int) func() {
	stamps := append([]StampState(nil), e.Seal.Stamps...)
	index, stampedAt := e.Index, e.Seal.StampedAt
	return func() {
		s := &r.seals
		s.last, s.lastWhen, s.lastIndex = fingerprint, when, index
		if !credited {
			return
		}
		var service *int64
		by := "service"
		for _, st := range stamps {
			if st.State != stamp.StateValid {
				continue
			}
			if st.Kind == seal.KindService && (service == nil || st.Time < *service) {
				t := st.Time
				service = &t
			}
			if st.Kind == seal.KindService {
				if prev, ok := s.services[st.Authority]; !ok || prev.Seal < index {
					s.services[st.Authority] = ServiceSeal{Service: st.Authority, Entries: size, When: formatMS(st.Time), Seal: index}
				}
			}
		}
		if service == nil {
			by = "block"
		}
		if service != nil && (!s.hasStamp || *service > s.lastStampTime) {
			s.lastStampTime, s.hasStamp = *service, true
		}
		// Every entry before the seal existed by then; one dated later is
		// not as it says. Going back, the entries already shown to have
		// existed earlier are left, with everything before them.
		for i := len(s.existedBy) - 1; i >= 0; i-- {
			if s.existedBy[i] <= *stampedTime {
				break
			}
			s.existedBy[i] = *stampedTime
			if s.stated[i] != math.MinInt64 && s.stated[i] > *stampedTime+clockAllowanceMS && !s.dated[i] {
				s.dated[i] = true
				r.lateProblem(i, Finding{CodeDatedAfterStamp, "this entry is dated later than the outside time-stamp that covers it"})
			}
		}
		s.sealed = &Sealed{Entries: size, When: stampedAt, Seal: index, By: by}
	}
}

// datedBeforeCovered reports whether the seal (dated when) is dated more
// than the allowance before a sound entry it covers, where no counted
// time-stamp settles which of the two dates is wrong.
func (r *reader) datedBeforeCovered(when int64, credited bool, stampedTime *int64) bool {
	s := &r.seals
	for i, t := range s.stated {
		if t == math.MinInt64 || !(t > when+clockAllowanceMS) || !r.soundAt(i) {
			continue
		}
		if credited && t > *stampedTime+clockAllowanceMS {
			continue
		}
		return true
	}
	return false
}

// soundAt reports whether entry i passed its own check (its stated time
// is kept only then).
func (r *reader) soundAt(i int) bool { return r.seals.stated[i] != math.MinInt64 }

// checkStamps checks the time-stamps beside a seal and returns the
// earliest time a counted one states, or nil.
func (r *reader) checkStamps(e *Entry, items []seal.Stamp, fingerprint string, when int64, counted bool, floor int64) *int64 {
	stamped, _ := canon.UnB64(fingerprint)
	var without []string
	for _, m := range r.opts.WithoutMethods {
		if m == stamp.MethodRSA || m == stamp.MethodECDSA || m == stamp.MethodEd25519 {
			without = append(without, m)
		}
	}
	for _, it := range items {
		if it.Kind == seal.KindBlock {
			// Block time-stamps (§21.4) are not checked here: never a pass.
			e.Seal.Stamps = append(e.Seal.Stamps, StampState{Kind: seal.KindBlock, State: stateUnavailable})
			e.Seal.missing = append(e.Seal.missing, "block time-stamp")
			e.Notes = append(e.Notes, "a block time-stamp beside this seal was not checked: this checker does not read block time-stamps")
			continue
		}
		res, err := stamp.Check(it.Token, stamped, stamp.Options{Trusted: r.opts.StampServices, Without: without})
		if err != nil {
			e.Seal.Stamps = append(e.Seal.Stamps, StampState{Kind: seal.KindService, State: stateInvalid})
			e.Problems = append(e.Problems, findingOf(err))
			continue
		}
		e.Seal.Stamps = append(e.Seal.Stamps, StampState{Kind: seal.KindService, State: res.State, When: res.When, Time: res.Time, Authority: res.Authority})
		if res.State == stamp.StateUnavailable {
			e.Seal.missing = append(e.Seal.missing, "time-stamp")
		}
	}
	for _, s := range e.Seal.Stamps {
		if s.State == stamp.StateUntrusted {
			e.Notes = append(e.Notes, "a time-stamp on this record is from a service you did not name as trusted; its certificate's fingerprint is "+s.Authority)
			r.seals.uncounted = append(r.seals.uncounted, UncountedStamp{Seal: e.Index, Service: s.Authority, When: s.When})
		}
	}
	var t *int64
	for _, s := range e.Seal.Stamps {
		if s.State == stamp.StateValid && s.Kind == seal.KindService && (t == nil || s.Time < *t) {
			v := s.Time
			t = &v
		}
	}
	_ = floor // block time-stamps, which the floor sets aside, are not counted here
	if counted && t != nil && *t < when-clockAllowanceMS {
		e.Problems = append(e.Problems, Finding{CodeDatedAfterStamp, "this record is dated later than a time-stamp that covers it"})
	}
	return t
}

// serviceTime is the earliest time a counted time-stamp from a service
// gives the seal, or nil.
func serviceTime(e *Entry) *int64 {
	var t *int64
	for _, s := range e.Seal.Stamps {
		if s.State == stamp.StateValid && s.Kind == seal.KindService && (t == nil || s.Time < *t) {
			v := s.Time
			t = &v
		}
	}
	return t
}

// sealSignatures checks a seal's three signatures against its keys, each
// with the key in its place.
func (r *reader) sealSignatures(rec *record.Record, keys jwk.SealKeySet) []SigState {
	states := make([]SigState, 0, len(rec.Signatures))
	for i, alg := range jwk.SealAlgs {
		if i >= len(rec.Signatures) {
			break
		}
		k := keys.Key(alg)
		st := SigState{Method: alg, State: stateInvalid}
		switch sig, err := rec.Signatures[i].Bytes(); {
		case r.opts.without(alg):
			st.State = stateUnavailable
		case r.covered:
			st.State = stateValid // the checkpoint's top fingerprint confirms the line
		case err == nil && k != nil && rec.Signatures[i].Alg == alg && r.check(k, rec, i, sig):
			st.State = stateValid
		}
		states = append(states, st)
	}
	return states
}

// noteTimes records, after an entry is taken, the time it states (for a
// seal after it), and the latest time a sound entry states.
func (r *reader) noteTimes(e *Entry) {
	s := &r.seals
	t := int64(math.MinInt64)
	if len(e.Problems) == 0 && e.Verified != "none" && e.hasWhen {
		t = e.when
		if t > s.latest {
			s.latest = t
		}
	}
	s.stated = append(s.stated, t)
	s.existedBy = append(s.existedBy, math.MaxInt64)
	s.dated = append(s.dated, false)
}

// lateProblem notes a problem found for an earlier entry (one a seal's
// time-stamp shows dated after it existed).
func (r *reader) lateProblem(index int, f Finding) {
	r.late = append(r.late, lateFinding{index: index, finding: f})
	r.running.problemEntries++
	if r.running.firstProblem == nil || r.running.firstProblem.Line > index+1 {
		r.running.firstProblem = &LineFinding{Line: index + 1, Code: f.Code, Message: f.Message}
	}
	if r.keep && index < len(r.entries) {
		en := &r.entries[index]
		en.Problems = append(en.Problems, f)
		en.Verified = "none"
	}
}

func formatMS(ms int64) string {
	return time.UnixMilli(ms).UTC().Truncate(time.Second).Format("2006-01-02T15:04:05Z")
}

// sealSummary fills in what the seals show.
func (r *reader) sealSummary(s *Summary) {
	s.Sealed = r.seals.sealed
	for _, v := range r.seals.services {
		s.Services = append(s.Services, v)
	}
	slices.SortFunc(s.Services, func(a, b ServiceSeal) int {
		if a.Service < b.Service {
			return -1
		}
		if a.Service > b.Service {
			return 1
		}
		return 0
	})
	s.NotCounted = append(s.NotCounted, r.seals.uncounted...)
}
