package copylog

import (
	"cmp"
	"fmt"
	"hash/maphash"
	"slices"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/receipt"
)

// LinesFunc hands the verified lines of one copy to fn, in copy order, and
// returns nil only when the whole copy verified. Compare calls it several
// times and must get the same lines each time: see [FileLines].
type LinesFunc func(fn func(Line) error) error

// CompareOptions tune [CompareLines].
type CompareOptions struct {
	// ListMatches fills Report.Matches with every call that matched. The
	// list grows with the calls (about 150 bytes a call); without it the
	// report counts the matches (Report.MatchCount) and memory stays flat
	// in the number of calls.
	ListMatches bool
}

// Compared is what [CompareLines] found.
type Compared struct {
	Report Report
	// Approvals are the approved stubs the copy does not back (see
	// [ApprovalProblems]).
	Approvals []string
	// DenialRules counts the copy's denials naming each rules fingerprint.
	DenialRules map[string]int
}

// CompareLines holds a copy against a book, as [Compare] does, in memory
// flat in the number of lines and entries: it reads the copy once, the
// book once (book.Each when given), and the copy again only when it has
// something to report (for the texts of what it reports), keeping per
// call 28 bytes (keyed 64-bit hashes of the call's and the stub's fingerprints, under a seed
// drawn for the run, so that no one writing a book or a copy can aim at a
// collision) and per denial 36. A copy that does not verify gives the
// report of [CopyUnreadable]; an error means the book could not be read.
func CompareLines(lines LinesFunc, book BookView, o CompareOptions) (Compared, error) {
	f := newFlat(book)
	if err := lines(f.addFirst); err != nil {
		return Compared{Report: CopyUnreadable(err, book), DenialRules: map[string]int{}}, nil
	}
	f.settleFirst()
	if err := book.each(f.addBook); err != nil {
		return Compared{}, err
	}
	f.settleBook(o.ListMatches)
	if f.wantedCalls > 0 || f.wantedDenials > 0 {
		if err := lines(f.addTexts); err != nil {
			return Compared{Report: CopyUnreadable(err, book), DenialRules: map[string]int{}}, nil
		}
	}
	return Compared{Report: f.report(o.ListMatches), Approvals: f.approvals, DenialRules: f.denialRules}, nil
}

// each hands the view's entries to fn: book.Each when given, else Entries.
func (v BookView) each(fn func(BookEntry) error) error {
	if v.Each != nil {
		return v.Each(fn)
	}
	for _, e := range v.Entries {
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

// Flags of a flatCall, in its meta.
const (
	callHasStub = 1 << iota
	callLate
	callNotWritten
	callMatched
	callInBook // the book holds a stub of the executor for it
	callWanted // its texts are read in the last pass
)

// maxCalls is the most sent lines a copy may hold for compare: a call's
// index (the order of its sent line) is 32 bits.
const maxCalls = 1<<32 - 1

// flatCall is what compare keeps of one sent line's call: 24 bytes, and 4
// more for its place among the calls sorted by key.
type flatCall struct {
	key  uint64 // hash of the call's fingerprint (the executor.call detail)
	stub uint64 // hash of the stub fingerprint of its last receipt line (its top 3 bits clear)
	meta uint32 // flags
	line uint32 // the book line of the stub that matched (in the first pass: the order of its last receipt line)
}

func (c *flatCall) has(flag uint32) bool { return c.meta&flag != 0 }
func (c *flatCall) set(flag uint32)      { c.meta |= flag }
func (c *flatCall) clear(flag uint32)    { c.meta &^= flag }

// Flags of a flatDenial.
const (
	denialHasRefusal = 1 << iota
	denialHasRules
	denialUnwrittenCap // no refusal by the hourly cap ("" or UnwrittenCap)
	denialFound        // the book holds its refusal
	denialBookStates   // that refusal's entry says its slip states rules
	denialWanted
)

// flatDenial is what compare keeps of one denial line, in copy order.
type flatDenial struct {
	refusal uint64 // hash of the refusal's fingerprint
	slip    uint64 // hash of the denial's slip
	refSlip uint64 // hash of the book refusal's slip
	line    uint32 // the book line of its refusal (the last one)
	flags   uint32
}

// keyed is a hash and a value, with the order it was read in.
type keyed struct {
	key, val uint64
	ord      uint32
}

// bookFinding is a finding of the book pass that names a call of the copy
// (by its index in calls); its texts come in the last pass.
type bookFinding struct {
	call        uint32
	fingerprint string
	line        int
	slip        uint64 // for a stub whose slip was not yet seen
}

// callText is what the last pass reads of a call it reports.
type callText struct {
	call, stub      string
	when            time.Time
	outcome, reason string
}

// denialText is what the last pass reads of a denial it reports.
type denialText struct{ call, reason, refusal, unwritten string }

type flat struct {
	seed    maphash.Seed
	service string
	book    BookView

	// The copy's side, from the first two passes.
	chunks      callChunks // every sent line's call, by the order of its sent line
	byKey       []uint32   // the calls kept (one a key, its first sent line), sorted by key
	sentLines   uint32
	open        map[uint64]uint32 // in the first pass: call -> its record, from its sent line to its first receipt
	later       []keyed           // receipt lines of calls not open, applied in settleFirst
	lineOrd     uint32            // receipt lines read
	denials     []flatDenial
	byRefusal   []uint32 // indices of denials with a refusal, sorted by refusal hash
	folded      int
	answers     []keyed // approval-answer fingerprint -> 1 approved, 2 declined (first wins)
	uses        []keyed // approval fingerprint -> call fingerprint (last wins)
	denialRules map[string]int

	// The book's side.
	slipSeen       map[uint64]bool // slip -> states rules
	slipNamed      map[uint64]bool // slip named by a stub or refusal -> one of them said it states rules
	unknown        []BookRef
	differs        []bookFinding
	firstInBook    []bookFinding // the first stub of calls whose copy names none
	rulesMissing   []bookFinding
	pendingRules   []bookFinding // stubs without rules under a slip not yet seen
	approvals      []string
	wantedCalls    int
	wantedDenials  int
	calledInOrder  []uint32 // indices of wanted calls in copy order
	matchCount     int
	callTexts      map[uint32]*callText
	denialTexts    map[uint32]*denialText
	sentOrdinal    uint32
	denialOrdinal  uint32
	denialsWithout []uint32 // denials found without rules whose slip states them
}

func newFlat(book BookView) *flat {
	service := book.Service
	if service == "" {
		service = DefaultService
	}
	return &flat{
		seed: maphash.MakeSeed(), service: service, book: book,
		denialRules: map[string]int{}, slipSeen: map[uint64]bool{}, slipNamed: map[uint64]bool{},
		callTexts: map[uint32]*callText{}, denialTexts: map[uint32]*denialText{}, open: map[uint64]uint32{},
	}
}

func (f *flat) hash(s string) uint64 { return maphash.String(f.seed, s) }

// callKey is the hash of call's fingerprint, as a stub's executor.call
// detail holds it.
func (f *flat) callKey(call string) uint64 { return f.hash(canon.Fingerprint([]byte(call))) }

// find returns the index of the call whose key is key, or -1.
func (f *flat) find(key uint64) int {
	p, ok := slices.BinarySearchFunc(f.byKey, key, func(i uint32, k uint64) int { return cmp.Compare(f.call(i).key, k) })
	if !ok {
		return -1
	}
	return int(f.byKey[p])
}

// call is the record of the call at index i (the order of its first sent
// line).
func (f *flat) call(i uint32) *flatCall { return f.chunks.at(i) }

// addFirst is the first pass: sent calls, denials, approvals.
func (f *flat) addFirst(ln Line) error {
	switch ln.Kind {
	case KindSent:
		if f.sentLines == maxCalls {
			return fmt.Errorf("the copy holds more than %d sent lines, more than compare can hold", maxCalls)
		}
		key := f.callKey(ln.Call)
		if _, open := f.open[key]; !open {
			f.open[key] = f.sentLines
		}
		f.chunks.add(flatCall{key: key})
		f.sentLines++
	case KindReceipt, KindLateReceipt, KindNotWritten:
		f.receiptLine(ln)
	case KindDenial:
		d := flatDenial{slip: f.hash(ln.Slip)}
		if ln.Refusal != "" {
			d.refusal = f.hash(ln.Refusal)
			d.flags |= denialHasRefusal
		}
		if ln.Rules != "" {
			d.flags |= denialHasRules
			f.denialRules[ln.Rules]++
		}
		if ln.Unwritten == "" || ln.Unwritten == UnwrittenCap {
			d.flags |= denialUnwrittenCap
		}
		f.denials = append(f.denials, d)
	case KindDenialsFolded:
		// Refusals past the hourly cap, counted: none wrote a refusal, by design.
		f.folded += int(ln.Count)
	case KindApprovalAnswer:
		if fp, err := AnswerFingerprint(ln); err == nil {
			v := uint64(2)
			if ln.Answer == AnswerApproved {
				v = 1
			}
			f.answers = append(f.answers, keyed{key: f.hash(fp), val: v, ord: uint32(len(f.answers))})
		}
	case KindApprovalUse:
		f.uses = append(f.uses, keyed{key: f.hash(ln.Approval), val: f.callKey(ln.Call), ord: uint32(len(f.uses))})
	}
	return nil
}

// settleFirst sorts what the first pass kept: a call is kept once, at its
// first sent line, with the receipt lines of all its records and those
// that waited; an answer's first line wins, a use's last.
func (f *flat) settleFirst() {
	f.open = nil
	f.byKey = make([]uint32, f.chunks.n)
	for i := range f.byKey {
		f.byKey[i] = uint32(i)
	}
	slices.SortFunc(f.byKey, func(a, b uint32) int {
		return cmp.Or(cmp.Compare(f.call(a).key, f.call(b).key), cmp.Compare(a, b))
	})
	kept := f.byKey[:0]
	for _, i := range f.byKey {
		c := f.call(i)
		if n := len(kept); n > 0 && f.call(kept[n-1]).key == c.key {
			k := f.call(kept[n-1])
			if c.has(callNotWritten) {
				k.set(callNotWritten)
			}
			if c.line > k.line {
				k.line, k.stub = c.line, c.stub
				k.meta = k.meta&^(callHasStub|callLate) | c.meta&(callHasStub|callLate)
			}
			continue
		}
		kept = append(kept, i)
	}
	f.byKey = slices.Clip(kept)
	for _, ev := range f.later {
		if i := f.find(ev.key); i >= 0 {
			f.call(uint32(i)).apply(ev)
		}
	}
	f.later = nil
	for _, i := range f.byKey {
		f.call(i).line = 0
	}
	byKeyThenOrd := func(a, b keyed) int { return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.ord, b.ord)) }
	slices.SortFunc(f.answers, byKeyThenOrd)
	f.answers = slices.CompactFunc(f.answers, func(a, b keyed) bool { return a.key == b.key })
	slices.SortFunc(f.uses, func(a, b keyed) int { return byKeyThenOrd(b, a) }) // the last use first
	f.uses = slices.CompactFunc(f.uses, func(a, b keyed) bool { return a.key == b.key })
	slices.Reverse(f.uses)
	for i := range f.denials {
		if f.denials[i].flags&denialHasRefusal != 0 {
			f.byRefusal = append(f.byRefusal, uint32(i))
		}
	}
	slices.SortFunc(f.byRefusal, func(a, b uint32) int { return cmp.Compare(f.denials[a].refusal, f.denials[b].refusal) })
}

// receiptLine is what the first pass does with a receipt, late-receipt or
// not-written line: it goes to the call's record while the call is open
// (sent, no receipt yet), else it waits in f.later for settleFirst.
func (f *flat) receiptLine(ln Line) {
	f.lineOrd++
	ev := keyed{key: f.callKey(ln.Call), ord: f.lineOrd}
	switch {
	case ln.Kind == KindNotWritten:
		ev.val = evNotWritten
	case ln.Stub != "":
		ev.val = f.hash(ln.Stub)&^evFlags | evStub
	}
	if ln.Kind == KindLateReceipt {
		ev.val |= evLate
	}
	i, open := f.open[ev.key]
	if !open {
		f.later = append(f.later, ev)
		return
	}
	f.chunks.at(i).apply(ev)
	if ln.Kind != KindNotWritten {
		delete(f.open, ev.key)
	}
}

// Flags of a receipt event's val (the stub's hash is in the other bits).
const (
	evNotWritten = 1 << 63
	evStub       = 1 << 62
	evLate       = 1 << 61
	evFlags      = evNotWritten | evStub | evLate
)

// apply puts a receipt event on the call: a not-written line marks it; a
// receipt or late-receipt line later than the last one applied (its order
// kept in line until the book pass) names its stub.
func (c *flatCall) apply(ev keyed) {
	if ev.val&evNotWritten != 0 {
		c.set(callNotWritten)
		return
	}
	if ev.ord <= c.line {
		return
	}
	c.line = ev.ord
	c.clear(callHasStub | callLate)
	c.stub = 0
	if ev.val&evStub != 0 {
		c.set(callHasStub)
		c.stub = ev.val &^ evFlags
	}
	if ev.val&evLate != 0 {
		c.set(callLate)
	}
}

// lookup returns the value kept for key in a settled keyed list.
func lookup(list []keyed, key uint64) (uint64, bool) {
	i, ok := slices.BinarySearchFunc(list, key, func(k keyed, key uint64) int { return cmp.Compare(k.key, key) })
	if !ok {
		return 0, false
	}
	return list[i].val, true
}

// addBook is the book's pass.
func (f *flat) addBook(e BookEntry) error {
	if e.Kind == EntrySlip {
		h := f.hash(e.Fingerprint)
		f.slipSeen[h] = f.slipSeen[h] || e.SlipStatesRules
		return nil
	}
	slip := f.hash(e.Slip)
	f.slipNamed[slip] = f.slipNamed[slip] || e.SlipStatesRules
	switch e.Kind {
	case EntryRefusal:
		f.addRefusal(e, slip)
	case EntryStub:
		f.checkApproval(e)
		if e.With == f.service {
			f.addStub(e, slip)
		}
	}
	return nil
}

// addRefusal notes a refusal for the denials that name it (its last entry wins).
func (f *flat) addRefusal(e BookEntry, slip uint64) {
	h := f.hash(e.Fingerprint)
	i, _ := slices.BinarySearchFunc(f.byRefusal, h, func(d uint32, h uint64) int { return cmp.Compare(f.denials[d].refusal, h) })
	for ; i < len(f.byRefusal) && f.denials[f.byRefusal[i]].refusal == h; i++ {
		d := &f.denials[f.byRefusal[i]]
		d.flags |= denialFound
		d.flags &^= denialBookStates
		if e.SlipStatesRules {
			d.flags |= denialBookStates
		}
		d.line, d.refSlip = uint32(e.Line), slip
	}
}

// addStub holds one stub of the executor against the copy.
func (f *flat) addStub(e BookEntry, slip uint64) {
	callFP := e.Details[receipt.LabelCall]
	i := f.find(f.hash(callFP))
	if i < 0 {
		f.unknown = append(f.unknown, BookRef{Line: e.Line, Stub: e.Fingerprint, CallFingerprint: callFP})
		return
	}
	c := f.call(uint32(i))
	at := bookFinding{call: uint32(i), fingerprint: e.Fingerprint, line: e.Line, slip: slip}
	switch {
	case c.has(callHasStub) && !c.has(callMatched) && f.hash(e.Fingerprint)&^evFlags == c.stub:
		c.set(callMatched)
		c.line = uint32(e.Line)
	case c.has(callHasStub):
		f.differs = append(f.differs, at)
	case !c.has(callInBook):
		f.firstInBook = append(f.firstInBook, at)
	}
	c.set(callInBook)
	if e.Details[receipt.LabelRules] == "" {
		states, seen := f.slipSeen[slip]
		switch {
		case e.SlipStatesRules || (seen && states):
			f.rulesMissing = append(f.rulesMissing, at)
		case !seen:
			f.pendingRules = append(f.pendingRules, at)
		}
	}
}

// checkApproval checks a stub naming an executor.approval against the copy.
func (f *flat) checkApproval(e BookEntry) {
	fp, ok := e.Details[receipt.LabelApproval]
	if !ok {
		return
	}
	answer, found := lookup(f.answers, f.hash(fp))
	use, used := lookup(f.uses, f.hash(fp))
	switch {
	case !found:
		f.approvals = append(f.approvals, fmt.Sprintf("book line %d: the stub names an approval the copy does not hold", e.Line))
	case answer != 1:
		f.approvals = append(f.approvals, fmt.Sprintf("book line %d: the stub names an answer that declined", e.Line))
	case !used || use != f.hash(e.Details[receipt.LabelCall]):
		f.approvals = append(f.approvals, fmt.Sprintf("book line %d: the copy has no use of the approval by this call", e.Line))
	}
}

// slipStates is whether the slip (hash) states rules, by the book's end.
func (f *flat) slipStates(slip uint64) bool { return f.slipSeen[slip] }

// settleBook decides, once the book is read, which calls and denials are
// reported, and so whose texts the last pass reads.
func (f *flat) settleBook(listMatches bool) {
	for _, p := range f.pendingRules {
		if f.slipStates(p.slip) {
			f.rulesMissing = append(f.rulesMissing, p)
		}
	}
	f.pendingRules = nil
	slices.SortStableFunc(f.rulesMissing, func(a, b bookFinding) int { return cmp.Compare(a.line, b.line) })
	want := func(i uint32) {
		if c := f.call(i); !c.has(callWanted) {
			c.set(callWanted)
			f.wantedCalls++
		}
	}
	for _, list := range [][]bookFinding{f.differs, f.rulesMissing} {
		for _, d := range list {
			want(d.call)
		}
	}
	for _, i := range f.byKey {
		switch c := f.call(i); {
		case c.has(callMatched):
			f.matchCount++
			if listMatches {
				want(i)
			}
		default: // missing, not written or sent without receipt
			want(i)
		}
	}
	for _, i := range f.byKey {
		if f.call(i).has(callWanted) {
			f.calledInOrder = append(f.calledInOrder, i)
		}
	}
	slices.Sort(f.calledInOrder) // a call's index is the order of its first sent line
	for i := range f.denials {
		d := &f.denials[i]
		switch {
		case d.flags&denialHasRefusal == 0 && d.flags&denialUnwrittenCap != 0:
			continue // counted
		case d.flags&denialHasRefusal == 0, d.flags&denialFound == 0:
		case d.flags&denialHasRules == 0 && (d.flags&denialBookStates != 0 || f.slipStates(d.refSlip) || f.slipRules(d.slip)):
			f.denialsWithout = append(f.denialsWithout, uint32(i))
		default:
			continue
		}
		d.flags |= denialWanted
		f.wantedDenials++
	}
}

// slipRules is whether some stub or refusal under slip says its slip states
// rules (by the book's end).
func (f *flat) slipRules(slip uint64) bool {
	said, named := f.slipNamed[slip]
	return named && (said || f.slipStates(slip))
}

// addTexts is the last pass: the texts of what the report names.
func (f *flat) addTexts(ln Line) error {
	switch ln.Kind {
	case KindSent:
		// The record of this sent line is the one at its order (the
		// passes read the same lines: FileLines fails a copy that changed),
		// and only a call's first sent line is ever wanted: no hash needed.
		ord := f.sentOrdinal
		f.sentOrdinal++
		if int(ord) < f.chunks.n && f.call(ord).has(callWanted) {
			t := f.text(ord)
			t.call, t.when = ln.Call, ln.When
		}
	case KindReceipt, KindLateReceipt:
		if i := f.find(f.callKey(ln.Call)); i >= 0 && f.call(uint32(i)).has(callWanted) {
			f.text(uint32(i)).stub = ln.Stub
		}
	case KindNotWritten:
		if i := f.find(f.callKey(ln.Call)); i >= 0 && f.call(uint32(i)).has(callWanted) {
			t := f.text(uint32(i))
			t.outcome, t.reason = "", ln.Reason
			if ln.Outcome != nil {
				t.outcome = ln.Outcome.Name
			}
		}
	case KindDenial:
		ord := f.denialOrdinal
		f.denialOrdinal++
		if int(ord) < len(f.denials) && f.denials[ord].flags&denialWanted != 0 {
			f.denialTexts[ord] = &denialText{call: ln.Call, reason: ln.Reason, refusal: ln.Refusal, unwritten: ln.Unwritten}
		}
	}
	return nil
}

func (f *flat) text(i uint32) *callText {
	t := f.callTexts[i]
	if t == nil {
		t = &callText{}
		f.callTexts[i] = t
	}
	return t
}

// callTextOf returns the texts read of call i (empty when the copy changed
// between passes, which its verification then reports).
func (f *flat) callTextOf(i uint32) callText {
	if t := f.callTexts[i]; t != nil {
		return *t
	}
	return callText{}
}

// report puts the findings in the order Compare has always given them:
// calls in the order first sent, each call's stubs in book order, denials
// in copy order.
func (f *flat) report(listMatches bool) Report {
	r := newReport(f.service, f.book)
	r.Calls = len(f.byKey)
	r.MatchCount = f.matchCount
	differsOf := map[uint32][]bookFinding{}
	for _, d := range f.differs {
		differsOf[d.call] = append(differsOf[d.call], d)
	}
	firstOf := map[uint32]bookFinding{}
	for _, b := range f.firstInBook {
		firstOf[b.call] = b
	}
	for _, i := range f.calledInOrder {
		c, t := f.call(i), f.callTextOf(i)
		switch {
		case c.has(callHasStub):
			if c.has(callMatched) && listMatches {
				r.Matches = append(r.Matches, Match{Call: t.call, Stub: t.stub, BookLine: int(c.line), Late: c.has(callLate)})
			}
			for _, d := range differsOf[i] {
				r.Differs = append(r.Differs, Differ{Call: t.call, CopyStub: t.stub, BookStub: d.fingerprint, BookLine: d.line})
			}
			if !c.has(callInBook) {
				r.Missing = append(r.Missing, Missing{Call: t.call, Stub: t.stub})
			}
		case c.has(callNotWritten):
			nw := NotWritten{Call: t.call, Outcome: t.outcome, Reason: t.reason}
			if b, ok := firstOf[i]; ok {
				nw.BookStub, nw.BookLine = b.fingerprint, b.line
			}
			r.NotWritten = append(r.NotWritten, nw)
		default:
			s := SentWithoutReceipt{Call: t.call, Sent: canon.FormatTime(t.when)}
			if b, ok := firstOf[i]; ok {
				s.BookStub, s.BookLine = b.fingerprint, b.line
			}
			r.SentWithoutReceipt = append(r.SentWithoutReceipt, s)
		}
	}
	r.UnknownReceipts = append(r.UnknownReceipts, f.unknown...)
	for _, w := range f.rulesMissing {
		r.WithoutRules = append(r.WithoutRules, RulesMissing{Kind: EntryStub, Call: f.callTextOf(w.call).call, Fingerprint: w.fingerprint, BookLine: w.line})
	}
	without := map[uint32]bool{}
	for _, i := range f.denialsWithout {
		without[i] = true
	}
	for i := range f.denials {
		d := &f.denials[i]
		r.Denials++
		t := f.denialTexts[uint32(i)]
		if t == nil {
			t = &denialText{}
		}
		switch {
		case d.flags&denialHasRefusal == 0 && d.flags&denialUnwrittenCap != 0:
			r.DenialsUnwritten++ // over the hourly cap: no refusal was written
		case d.flags&denialHasRefusal == 0:
			r.DenialsNotWritten = append(r.DenialsNotWritten, DenialNotWritten{Call: t.call, Reason: t.reason, Why: t.unwritten})
		case d.flags&denialFound == 0:
			r.MissingDenials = append(r.MissingDenials, MissingDenial{Call: t.call, Refusal: t.refusal, Reason: t.reason})
		case without[uint32(i)]:
			r.WithoutRules = append(r.WithoutRules, RulesMissing{Kind: EntryRefusal, Call: t.call, Fingerprint: t.refusal, BookLine: int(d.line)})
		}
	}
	r.Denials += f.folded
	r.DenialsUnwritten += f.folded
	return r
}

// callChunks holds the calls in chunks of a fixed size: a slice grown by
// appending would leave up to twice its size in garbage while the copy's
// lines are read, and one joined at the end would be there twice.
type callChunks struct {
	list [][]flatCall
	n    int
}

const callChunk = 4096

func (c *callChunks) add(fc flatCall) {
	if c.n%callChunk == 0 {
		c.list = append(c.list, make([]flatCall, 0, callChunk))
	}
	last := &c.list[len(c.list)-1]
	*last = append(*last, fc)
	c.n++
}

func (c *callChunks) at(i uint32) *flatCall { return &c.list[i/callChunk][i%callChunk] }
