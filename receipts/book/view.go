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

// flightView is a slip's tally with the calls still in flight counted,
// for the ledger. Its cost does not grow with the book: totals and counts
// are kept running, and a period is one binary search over the running
// sums of the stubs in order of time.
type flightView struct {
	t      *tally
	flight []*Reservation // in flight under this slip
}

func (v flightView) sum(i int) *big.Int {
	s := new(big.Int).Set(committedView{v.t}.sum(i))
	for _, r := range v.flight {
		for _, e := range r.effects {
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
		for _, e := range r.effects {
			if e.limit == i && e.kind == "count" {
				n++
			}
		}
	}
	return n
}

func (v flightView) periodWorst(i int, when, per, value int64) *big.Int {
	var inflight []periodItem
	for _, r := range v.flight {
		for _, e := range r.effects {
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
		from := sort.Search(len(p.items), func(k int) bool { return p.items[k].when > when-per })
		worst.Add(worst, new(big.Int).Sub(p.prefix[len(p.items)], p.prefix[from]))
	}
	for _, it := range inflight {
		if it.when > when-per {
			worst.Add(worst, big.NewInt(it.value))
		}
	}
	return worst
}
