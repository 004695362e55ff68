package book

import (
	"math/big"
	"sort"
)

// committedView is a slip's tally as the book holds it. Its periods are
// worked out as the reference does, from every stub afresh: it is the
// from-scratch answer the ledger's quicker view must equal.
type committedView struct{ t *tally }

func (v committedView) sum(i int) *big.Int {
	if s := v.t.sums[i]; s != nil {
		return s
	}
	return new(big.Int)
}

func (v committedView) count(i int) int64 { return v.t.counts[i] }

func (v committedView) periodWorst(i int, when, per, value int64) *big.Int {
	var items []periodItem
	if p := v.t.periods[i]; p != nil {
		items = p.items
	}
	return naivePeriodWorst(items, when, per, value)
}

// flightView is a slip's tally, or a pass's, with the calls still in
// flight counted, for the ledger. Its cost does not grow with the book:
// totals and counts are kept running, and a period is one binary search
// over the running sums of the stubs in order of time.
type flightView struct {
	t      *tally
	flight []*Reservation // in flight under the slip
	// pass, when set, is the pass whose totals t is: a call counts with
	// what it adds to that pass (nothing, if it is not under it).
	pass *passState
}

// effectsOf is what the call r in flight adds to the totals viewed.
func (v flightView) effectsOf(r *Reservation) []effect {
	if v.pass == nil {
		return r.effects
	}
	for _, pe := range r.passEffects {
		if pe.pass == v.pass {
			return pe.effects
		}
	}
	return nil
}

func (v flightView) sum(i int) *big.Int {
	s := new(big.Int).Set(committedView{v.t}.sum(i))
	for _, r := range v.flight {
		for _, e := range v.effectsOf(r) {
			if e.limit == i && e.kind == "sum" {
				s.Add(s, big.NewInt(e.value))
			}
		}
	}
	return s
}

func (v flightView) count(i int) int64 {
	n := v.t.counts[i]
	for _, r := range v.flight {
		for _, e := range v.effectsOf(r) {
			if e.limit == i && e.kind == "count" {
				n++
			}
		}
	}
	return n
}

// windowStart finds the first of items (in order of time) dated after
// cutoff by galloping back from the end and then halving: its cost grows
// with the number of stubs inside the period, never with the book, and it
// touches only the latest, recently written stubs.
func windowStart(items []periodItem, cutoff int64) int {
	n := len(items)
	hi, step := n, 1
	lo := n - step
	for lo >= 0 && items[lo].when > cutoff {
		hi = lo
		step *= 2
		lo = n - step
	}
	lo = max(lo, -1) + 1 // items[lo-1] (if any) is not after cutoff
	return lo + sort.Search(hi-lo, func(k int) bool { return items[lo+k].when > cutoff })
}

func (v flightView) periodWorst(i int, when, per, value int64) *big.Int {
	var inflight []periodItem
	for _, r := range v.flight {
		for _, e := range v.effectsOf(r) {
			if e.limit == i && e.kind == "period" {
				inflight = append(inflight, periodItem{when: r.when, value: e.value, entry: -1})
			}
		}
	}
	p := v.t.periods[i]
	quick := p == nil || (p.sorted && p.items[len(p.items)-1].when <= when)
	for _, it := range inflight {
		quick = quick && it.when <= when
	}
	if !quick {
		var items []periodItem
		if p != nil {
			items = p.items
		}
		return naivePeriodWorst(append(append([]periodItem(nil), items...), inflight...), when, per, value)
	}
	// Nothing is dated after the proposed action: the largest period it
	// falls in is its own, which holds everything later than when − per.
	worst := big.NewInt(value)
	if p != nil {
		from := windowStart(p.items, when-per)
		worst.Add(worst, p.prefix[len(p.items)].sub(p.prefix[from]).big())
	}
	for _, it := range inflight {
		if it.when > when-per {
			worst.Add(worst, big.NewInt(it.value))
		}
	}
	return worst
}
