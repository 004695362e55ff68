package book

import (
	"fmt"
	"math/big"
	"math/bits"
	"sort"

	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
)

// What a stub, or a proposed action, is compared with: the slip's rules in
// a form that is quick to look up (format description, section 8).
type limit struct {
	action string
	kind   string // "max", "each" or "count"
	value  int64
	per    int64 // seconds; 0 = none
	unit   string
}

type condition struct {
	need   string // "countersignature" or "approval"
	action string // "" = every action
	above  *int64
	unit   string
}

type service struct {
	id   string
	keys *jwk.KeySet // nil: the service cannot countersign
}

type rules struct {
	actions    map[string]bool
	limits     []limit
	requires   []condition
	never      map[string]bool
	with       map[string]*service
	validFrom  int64 // unix seconds
	validUntil int64
}

// request is what a stub or a proposal says was done: the members an
// approval must agree with, and the time.
type request struct {
	action  string
	when    int64
	amount  *amount
	with    string
	hasWith bool
}

type amount struct {
	unit  string
	value int64
}

// tally is the running state of one slip: totals, counts and the stubs
// that fall under a limit "in any period", by limit index.
type tally struct {
	sums        map[int]*big.Int
	counts      map[int]int64
	periods     map[int]*periodList
	periodOrder []int
}

func newTally() *tally {
	return &tally{sums: map[int]*big.Int{}, counts: map[int]int64{}, periods: map[int]*periodList{}}
}

type periodItem struct {
	when  int64
	value int64
	entry int // the entry's index; -1 for a call in flight or a proposal
}

// periodList holds the stubs under one period limit in book order, with
// running sums so that the total of a window ending at the latest stub is
// found by one binary search. Nothing in it is a pointer, so a large book
// costs the garbage collector nothing to scan.
type periodList struct {
	items  []periodItem
	prefix []u128 // prefix[k] = sum of items[:k]
	sorted bool   // items are in order of time
}

func (p *periodList) add(it periodItem) {
	if len(p.prefix) == 0 {
		p.prefix = append(p.prefix, u128{})
		p.sorted = true
	}
	if n := len(p.items); n > 0 && it.when < p.items[n-1].when {
		p.sorted = false
	}
	p.items = append(p.items, it)
	p.prefix = append(p.prefix, p.prefix[len(p.prefix)-1].add(uint64(it.value)))
}

// u128 is a running sum of amounts. It is exact for any book: at most
// 100,000 entries (and calls in flight) of at most 2^53−1 each sum to less
// than 2^70. Totals are compared and reported as big.Int.
type u128 struct{ hi, lo uint64 }

func (a u128) add(v uint64) u128 {
	lo, carry := bits.Add64(a.lo, v, 0)
	return u128{a.hi + carry, lo}
}

func (a u128) sub(b u128) u128 {
	lo, borrow := bits.Sub64(a.lo, b.lo, 0)
	return u128{a.hi - b.hi - borrow, lo}
}

func (a u128) big() *big.Int {
	n := new(big.Int).SetUint64(a.hi)
	n.Lsh(n, 64)
	return n.Or(n, new(big.Int).SetUint64(a.lo))
}

// effect is one change a stub makes to its slip's tally, applied only
// once the stub is accepted.
type effect struct {
	limit int
	kind  string // "sum", "count" or "period"
	value int64
}

func (t *tally) apply(effects []effect, when int64, entry int) {
	for _, e := range effects {
		switch e.kind {
		case "sum":
			s := t.sums[e.limit]
			if s == nil {
				s = new(big.Int)
				t.sums[e.limit] = s
			}
			s.Add(s, big.NewInt(e.value))
		case "count":
			t.counts[e.limit]++
		case "period":
			p := t.periods[e.limit]
			if p == nil {
				p = &periodList{}
				t.periods[e.limit] = p
				t.periodOrder = append(t.periodOrder, e.limit)
			}
			p.add(periodItem{when: when, value: e.value, entry: entry})
		}
	}
}

// view is the tally as a comparison sees it: for the check before acting,
// with the calls in flight counted.
type view interface {
	sum(i int) *big.Int
	count(i int) int64
	// periodWorst is the largest total of any period the proposed action
	// would fall in (the reference's periodWith).
	periodWorst(i int, when, per, value int64) *big.Int
}

// mode says what a comparison is for.
type mode int

const (
	forChecker mode = iota // a stub being read: periods settled at the end
	forBefore              // a proposed action: periods worked out at once
)

type compared struct {
	breaches []Finding
	needs    []string
	effects  []effect
	// amountMissing is set once the amount-missing finding is recorded:
	// it is named once per action, however many terms need an amount.
	amountMissing bool
	// who is what the action is compared with, as the findings name it:
	// "the slip", "the pass" or "the earlier pass".
	who string
}

// The names of what an action is compared with (§25): its slip, the pass
// a helper acts under, or a pass above that one.
const (
	whoSlip        = "the slip"
	whoPass        = "the pass"
	whoEarlierPass = "the earlier pass"
)

func allowedIn(l limit) *big.Int { return big.NewInt(l.value) }

// compareWithSlip compares one stub, or one proposed action, with its slip
// (the reference's compareWithSlip), in the reference's order of findings.
func compareWithSlip(s *rules, v view, c request, svc *service, cancelled bool, m mode) compared {
	return compareWith(s, v, c, svc, cancelled, m, whoSlip)
}

// compareWith is compareWithSlip with s the rules of who: a slip, or a
// pass read as a slip (its actions, limits and times; no conditions, no
// stated rules).
func compareWith(s *rules, v view, c request, svc *service, cancelled bool, m mode, who string) compared {
	out := compared{who: who}
	out.checkTerms(s, c, svc, cancelled)
	for i, l := range s.limits {
		if l.action == c.action {
			out.checkLimit(v, c, i, l, m)
		}
	}
	out.collectNeeds(s, c)
	return out
}

// checkTerms records the breaches of the slip's terms that need no
// counting: the action, cancellation, never, the party and the time.
func (out *compared) checkTerms(s *rules, c request, svc *service, cancelled bool) {
	if !s.actions[c.action] {
		out.breaches = append(out.breaches, Finding{"action-not-allowed", fmt.Sprintf("%s does not allow the action %q", out.who, c.action)})
	}
	kind, _ := actionKind(c.action)
	if cancelled {
		out.breaches = append(out.breaches, Finding{"after-cancellation", "the person cancelled the slip before this action"})
	}
	if kind != "" && s.never[kind] {
		out.breaches = append(out.breaches, Finding{"prohibited", fmt.Sprintf("%s says never to do an action of the kind %q, and %q is of that kind", out.who, kind, c.action)})
	}
	if c.hasWith && svc == nil {
		out.breaches = append(out.breaches, Finding{"party-not-allowed", fmt.Sprintf("%s does not name %q as someone the agent may deal with", out.who, c.with)})
	}
	if c.when < s.validFrom || c.when >= s.validUntil {
		out.breaches = append(out.breaches, Finding{"outside-valid-time", "the action is dated outside the time " + out.who + " allows"})
	}
}

// amountIn reports whether the action gives an amount in unit; the first
// time it does not, the amount-missing finding is recorded.
func (out *compared) amountIn(c request, unit string) bool {
	if c.amount != nil && c.amount.unit == unit {
		return true
	}
	if !out.amountMissing {
		out.breaches = append(out.breaches, Finding{"amount-missing", fmt.Sprintf("%s sets a limit or a condition in %q for this action, and no amount is given in that unit", out.who, unit)})
		out.amountMissing = true
	}
	return false
}

// checkLimit records the effect of the action on limit i (l) and the
// breach of it, if any.
func (out *compared) checkLimit(v view, c request, i int, l limit, m mode) {
	if l.kind == "count" {
		out.checkCountLimit(v, c, i, l, m)
		return
	}
	if !out.amountIn(c, l.unit) {
		return
	}
	value := c.amount.value
	switch {
	case l.kind == "each":
		if value > l.value {
			out.breaches = append(out.breaches, Finding{"over-each-limit", fmt.Sprintf("this action is %d %s; %s allows no single action above %d %s", value, l.unit, out.who, l.value, l.unit)})
		}
	case l.per == 0:
		total := new(big.Int).Add(v.sum(i), big.NewInt(value))
		out.effects = append(out.effects, effect{i, "sum", value})
		if total.Cmp(allowedIn(l)) > 0 {
			over := new(big.Int).Sub(total, allowedIn(l))
			out.breaches = append(out.breaches, Finding{"over-limit", fmt.Sprintf("with this action the total is %s %s; %s's limit is %d %s: over by %s", total, l.unit, out.who, l.value, l.unit, over)})
		}
	default:
		out.effects = append(out.effects, effect{i, "period", value})
		if m == forBefore {
			if worst := v.periodWorst(i, c.when, l.per, value); worst.Cmp(allowedIn(l)) > 0 {
				out.breaches = append(out.breaches, overPeriod(l, worst, out.who))
			}
		}
	}
}

// checkCountLimit is checkLimit for a limit on the number of actions.
func (out *compared) checkCountLimit(v view, c request, i int, l limit, m mode) {
	if l.per == 0 {
		n := v.count(i) + 1
		out.effects = append(out.effects, effect{i, "count", 1})
		if n > l.value {
			out.breaches = append(out.breaches, Finding{"over-count-limit", fmt.Sprintf("this is action number %d of this kind under %s; %s allows %d", n, out.who, out.who, l.value)})
		}
		return
	}
	out.effects = append(out.effects, effect{i, "period", 1})
	if m == forBefore {
		if worst := v.periodWorst(i, c.when, l.per, 1); worst.Cmp(allowedIn(l)) > 0 {
			out.breaches = append(out.breaches, overPeriod(l, worst, out.who))
		}
	}
}

// collectNeeds records what the slip requires before the action (a
// person's approval above an amount, and the like), each once.
func (out *compared) collectNeeds(s *rules, c request) {
	for _, r := range s.requires {
		if r.action != "" && r.action != c.action {
			continue
		}
		if r.above != nil {
			if !out.amountIn(c, r.unit) {
				continue
			}
			if !(c.amount.value > *r.above) {
				continue
			}
		}
		if !contains(out.needs, r.need) {
			out.needs = append(out.needs, r.need)
		}
	}
}

func overPeriod(l limit, total *big.Int, who string) Finding {
	if l.kind == "count" {
		return Finding{"over-period-limit", fmt.Sprintf("with this action there are %s such actions in any %d seconds; %s allows %d", total, l.per, who, l.value)}
	}
	return Finding{"over-period-limit", fmt.Sprintf("with this action the total in any %d seconds is %s %s; %s's limit is %d %s", l.per, total, l.unit, who, l.value, l.unit)}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// windowTotals gives, for each item, the total of the period that ends at
// it: items are put in order of time (book order among equal times), and
// the period of each holds the items up to it later than its time minus
// the period (the reference's periodTotals).
func windowTotals(items []periodItem, per int64) ([]periodItem, []*big.Int) {
	sorted := make([]periodItem, len(items))
	copy(sorted, items)
	sort.SliceStable(sorted, func(a, b int) bool { return sorted[a].when < sorted[b].when })
	totals := make([]*big.Int, len(sorted))
	sum := new(big.Int)
	head := 0
	for k, it := range sorted {
		sum.Add(sum, big.NewInt(it.value))
		for sorted[head].when <= it.when-per {
			sum.Sub(sum, big.NewInt(sorted[head].value))
			head++
		}
		totals[k] = new(big.Int).Set(sum)
	}
	return sorted, totals
}

// naivePeriodWorst is the reference's periodWith over a plain list of items.
func naivePeriodWorst(items []periodItem, when, per, value int64) *big.Int {
	all := append(append([]periodItem(nil), items...), periodItem{when: when, value: value, entry: -2})
	sorted, totals := windowTotals(all, per)
	worst := new(big.Int)
	for k, it := range sorted {
		if (it.entry == -2 || (it.when > when && it.when < when+per)) && totals[k].Cmp(worst) > 0 {
			worst = totals[k]
		}
	}
	return worst
}

// settlePeriodsFn gives every stub whose period holds more than a limit
// allows the finding "over-period-limit" (through breach), once every
// stub has been read; who names, for each stub, what it was compared with.
func settlePeriodsFn(s *rules, t *tally, who func(entry int) string, breach func(entry int, f Finding)) {
	for _, i := range t.periodOrder {
		l := s.limits[i]
		sorted, totals := windowTotals(t.periods[i].items, l.per)
		for k, it := range sorted {
			if totals[k].Cmp(allowedIn(l)) > 0 && it.entry >= 0 {
				breach(it.entry, overPeriod(l, totals[k], who(it.entry)))
			}
		}
	}
}
