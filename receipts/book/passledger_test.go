package book

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
)

// TestPassMismatch: a pass that names, in "from", a pass given under
// another slip is "pass-mismatch"; so is a helper's stub under it.
func TestPassMismatch(t *testing.T) {
	b := newPassBook(t, map[string]any{"passes": int64(2)})
	other := map[string]any{}
	for k, v := range b.f.slip.Record.Content {
		other[k] = v
	}
	other["id"] = canon.NewID()
	other["passes"] = int64(2)
	delete(other, "type")
	s2, err := slip.WriteSlip(other, b.f.pk)
	if err != nil {
		t.Fatal(err)
	}
	h1, h2 := signer(t, 3), signer(t, 5)
	p1 := b.addPass(b.f.agent, b.passFields(h1, ""))
	b.lines = append(b.lines, Line{Slip: s2.Record})
	pf := b.passFields(h2, p1)
	pf.Slip = s2.Fingerprint
	b.addPass(h1, pf)
	p := b.order(1, 1)
	p.Slip = s2.Fingerprint
	b.stub(h1, p1, true, p)
	wantEntries(t, b.check(), [][]string{{"slip"}, {"pass"}, {"slip"}, {"pass", "pass-mismatch"}, {"stub", "pass-mismatch"}})

	// The check before acting: a call under the second slip naming the
	// first slip's pass is refused, as not covered by its slip.
	b.lines = b.lines[:3]
	l := b.open().Ledger()
	_, d := l.Reserve(Proposal{Slip: s2.Fingerprint, Pass: p1, Action: "tool.a", With: "executor", When: b.f.start.Add(time.Minute)})
	reasonOf(t, d, false, "not-in-slip")
	if d.Problems[0].Code != "pass-mismatch" {
		t.Fatalf("%v", d.Problems)
	}
}

// helperLine signs, with s, the stub of p under passFP at pos, with the
// executor's countersignature.
func (b *passBook) helperLine(s jwk.Signer, passFP string, pos Position, p Proposal) Line {
	b.t.Helper()
	c := b.f.stubContent(pos, p, "")
	if passFP != "" {
		c["pass"] = passFP
	}
	rec, err := record.Sign(context.Background(), record.Stub, c, s)
	if err != nil {
		b.t.Fatal(err)
	}
	return Line{Stub: rec, Countersignature: b.f.countersign(b.t, rec, p.When)}
}

func (b *passBook) open() *Book {
	b.t.Helper()
	path := filepath.Join(b.t.TempDir(), "book.jsonl")
	if err := os.WriteFile(path, b.text(), 0o600); err != nil {
		b.t.Fatal(err)
	}
	bk, err := OpenBook(path, b.f.opts)
	if err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(func() { _ = bk.Close() })
	if err := bk.Ledger().Sound(); err != nil {
		b.t.Fatal(err)
	}
	return bk
}

func reasonOf(t *testing.T, d Decision, allowed bool, reason string) {
	t.Helper()
	if d.Allowed != allowed || (!allowed && d.Reason() != reason) {
		t.Fatalf("allowed %v, reason %q (%v %v); want %v, %q", d.Allowed, d.Reason(), d.Problems, d.Breaches, allowed, reason)
	}
}

// TestLedgerPasses: a helper's call is allowed only within the slip, its
// pass and every pass above, counting the calls in flight against each;
// its stub goes into the pass's chain; a pass the agent hands over is
// appended at run time; a cancelled slip or an expired pass stops the
// helper at once.
func TestLedgerPasses(t *testing.T) {
	b := newPassBook(t, map[string]any{"passes": int64(2), "actions": []any{"tool.a", "tool.b"},
		"limits": []any{map[string]any{"action": "tool.a", "max": int64(100), "unit": "GBP"}}})
	h1, h2, h3 := signer(t, 3), signer(t, 5), signer(t, 13)
	pf := b.passFields(h1, "")
	pf.Limits = []slip.Limit{{Action: "tool.a", Kind: "max", Value: 30, Unit: "GBP"}}
	pf.ValidUntil = b.f.start.Add(time.Hour)
	p1 := b.addPass(b.f.agent, pf)
	p2 := b.addPass(h1, b.passFields(h2, p1))
	bk := b.open()
	l := bk.Ledger()
	under := func(pass string, minutes int, value int64) Proposal {
		p := b.order(minutes, value)
		p.Pass = pass
		return p
	}

	r1, d := l.Reserve(under(p1, 1, 20))
	reasonOf(t, d, true, "")
	_, d = l.Reserve(under(p2, 1, 15)) // the earlier pass: 20 in flight + 15 > 30
	reasonOf(t, d, false, "over-limit")
	r1.Release()
	r2, d := l.Reserve(under(p2, 1, 15))
	reasonOf(t, d, true, "")
	_, d = l.Reserve(b.order(1, 90)) // the slip: 15 in flight (a helper's) + 90 > 100
	reasonOf(t, d, false, "over-limit")
	notInPass := under(p1, 1, 0)
	notInPass.Action, notInPass.Amount = "tool.b", nil
	_, d = l.Reserve(notInPass)
	reasonOf(t, d, false, "not-in-slip")
	_, d = l.Reserve(under(p1, 61, 1)) // the pass ended after an hour
	reasonOf(t, d, false, "outside-valid-time")
	_, d = l.Reserve(under(b.f.slip.Fingerprint, 1, 1))
	reasonOf(t, d, false, "not-in-slip")
	if d.Problems[0].Code != "pass-missing" {
		t.Fatalf("an unknown pass: %v", d.Problems)
	}

	// The helper's stub, in its pass's chain.
	pos, err := r2.Position(context.Background())
	if err != nil || pos.Seq != 0 || pos.Previous != "" {
		t.Fatalf("position %+v, %v", pos, err)
	}
	p := under(p2, 1, 15)
	if err := bk.AppendStub(r2, b.helperLine(h2, p1, pos, p)); err == nil {
		t.Fatal("a stub under another pass than its call's was appended")
	}
	if err := bk.AppendStub(r2, b.helperLine(h1, p2, pos, p)); err == nil {
		t.Fatal("a helper's stub signed with another helper's keys was appended")
	}
	line := b.helperLine(h2, p2, pos, p)
	if err := bk.AppendStub(r2, line); err != nil {
		t.Fatalf("the helper's stub: %v", err)
	}
	r3, d := l.Reserve(under(p2, 2, 1))
	reasonOf(t, d, true, "")
	if pos, _ := r3.Position(context.Background()); pos.Seq != 1 || pos.Previous != line.Stub.Fingerprint {
		t.Fatalf("the helper's next place: %+v", pos)
	}
	r3.Release()
	_, d = l.Reserve(under(p2, 0, 1)) // dated before the last stub of the helper's chain
	reasonOf(t, d, false, "slip-not-sound")
	if d.Problems[0].Code != "time-went-backwards" {
		t.Fatalf("%v", d.Problems)
	}
	agents, d := l.Reserve(b.order(0, 1)) // the agent's own chain is its own
	if !d.Allowed {
		t.Fatalf("the agent's call: %v %v", d.Problems, d.Breaches)
	}
	agents.Release()

	// A pass handed over at run time: checked, refused when wider, appended.
	wide := b.passFields(h3, "")
	wide.Actions = []string{"tool.a", "tool.c"}
	wideRec, err := wide.Sign(context.Background(), b.f.agent)
	if err != nil {
		t.Fatal(err)
	}
	if e := l.CheckPass(wideRec); len(e.Problems) != 0 || len(e.Breaches) != 1 || e.Breaches[0].Code != "pass-wider" {
		t.Fatalf("CheckPass of a wider pass: %+v", e)
	}
	size := l.Size()
	if err := bk.AppendPass(wideRec); problem.Code(err) != "pass-wider" || l.Size() != size {
		t.Fatalf("AppendPass of a wider pass: %v (size %d, was %d)", err, l.Size(), size)
	}
	strangers, err := b.passFields(h3, "").Sign(context.Background(), h3)
	if err != nil {
		t.Fatal(err)
	}
	if err := bk.AppendPass(strangers); problem.Code(err) != "signature-invalid" {
		t.Fatalf("AppendPass of a pass its helper signed: %v", err)
	}
	p3rec, err := b.passFields(h3, "").Sign(context.Background(), b.f.agent)
	if err != nil {
		t.Fatal(err)
	}
	if e := l.CheckPass(p3rec); len(e.Problems)+len(e.Breaches) != 0 {
		t.Fatalf("CheckPass: %+v", e)
	}
	if err := bk.AppendPass(p3rec); err != nil {
		t.Fatalf("AppendPass: %v", err)
	}
	if err := bk.AppendPass(p3rec); problem.Code(err) != "duplicate-id" {
		t.Fatalf("the same pass twice: %v", err)
	}
	r4, d := l.Reserve(under(p3rec.Fingerprint, 3, 1))
	reasonOf(t, d, true, "")
	r4.Release()
	st, ok := l.Pass(p3rec.Fingerprint)
	if !ok || st.Level != 1 || !st.Helper.Equal(h3.Keys()) || st.Stopped(b.f.start.Add(time.Minute)) != "" {
		t.Fatalf("PassState %+v", st)
	}
	if st, _ := l.Pass(p2); st.End != b.f.start.Add(time.Hour) || st.Stopped(b.f.start.Add(time.Hour)) != "outside-valid-time" {
		t.Fatalf("a pass under one that ends after an hour: %+v", st)
	}

	// The slip cancelled: every helper stops at once.
	if err := waitFlying(l, b.f.slip.Fingerprint); err != nil {
		t.Fatal(err)
	}
	if err := bk.Append(Line{Cancellation: b.f.cancellationBy(t, b.f.start.Add(4*time.Minute))}); err != nil {
		t.Fatal(err)
	}
	_, d = l.Reserve(under(p3rec.Fingerprint, 5, 1))
	reasonOf(t, d, false, "not-in-slip")
	if st, _ := l.Pass(p3rec.Fingerprint); st.Stopped(b.f.start.Add(5*time.Minute)) != "after-cancellation" {
		t.Fatalf("a pass under a cancelled slip: %+v", st)
	}

	// The book as the checker reads it, and as verify reports it.
	res := CheckBook(readFile(t, bk.Path()), b.f.opts)
	if !res.Summary.Intact || res.Summary.Counts.Passes != 3 {
		t.Fatalf("the book: %+v %v", res.Summary, kindsOf(res))
	}
	rep, err := VerifyFile(bk.Path(), b.f.opts.IssuerKeys)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := rep.Render(&out); err != nil || !rep.Intact || !strings.Contains(out.String(), ", 3 passes") {
		t.Fatalf("verify: %v\n%s", err, out.String())
	}
}

// waitFlying releases nothing: it reports an error when calls are still
// in flight under the slip (the test must have ended them).
func waitFlying(l *Ledger, slipFP string) error {
	if n := l.Flying(slipFP); n != 0 {
		return problem.New("check-failed", "%d calls still in flight", n)
	}
	return nil
}

// TestLedgerPassesFromScratch: on a book with passes, the ledger answers
// every proposal as the check before acting that reads the whole book.
func TestLedgerPassesFromScratch(t *testing.T) {
	b := newPassBook(t, map[string]any{"passes": int64(2), "limits": []any{map[string]any{"action": "tool.a", "max": int64(40), "unit": "GBP"}}})
	h1, h2 := signer(t, 3), signer(t, 5)
	pf := b.passFields(h1, "")
	pf.Limits = []slip.Limit{{Action: "tool.a", Kind: "count", Value: 2}, {Action: "tool.a", Kind: "max", Value: 25, Per: 3600, Unit: "GBP"}}
	p1 := b.addPass(b.f.agent, pf)
	p2 := b.addPass(h1, b.passFields(h2, p1))
	b.stub(h1, p1, true, b.order(1, 10))
	b.stub(h2, p2, true, b.order(2, 10))
	b.stub(b.f.agent, "", false, b.order(3, 10))
	text := b.text()
	bk := b.open()
	for _, pass := range []string{"", p1, p2, b.f.slip.Fingerprint} {
		for _, minutes := range []int{1, 4, 70} {
			for _, value := range []int64{1, 6, 11} {
				p := b.order(minutes, value)
				p.Pass = pass
				scratch := CheckBefore(text, p, b.f.opts)
				ledger := bk.Ledger().CheckBefore(p)
				if scratch.Allowed != ledger.Allowed || !equalCodes(scratch.Problems, ledger.Problems) || !equalCodes(scratch.Breaches, ledger.Breaches) {
					t.Errorf("pass %.8s, +%d min, %d: from scratch %v %v, the ledger %v %v", pass, minutes, value, scratch.Problems, scratch.Breaches, ledger.Problems, ledger.Breaches)
				}
			}
		}
	}
}

func equalCodes(a, b []Finding) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Code != b[i].Code {
			return false
		}
	}
	return true
}

// TestHeldHelperCall: a helper's call held for a person counts against its
// pass like one in flight, and is reserved only under the pass it was held
// under.
func TestHeldHelperCall(t *testing.T) {
	b := newPassBook(t, map[string]any{"passes": int64(1)})
	h1 := signer(t, 3)
	pf := b.passFields(h1, "")
	pf.Limits = []slip.Limit{{Action: "tool.a", Kind: "count", Value: 1}}
	p1 := b.addPass(b.f.agent, pf)
	l := b.open().Ledger()
	p := b.order(1, 1)
	p.Pass = p1
	held, d := l.Hold(p)
	reasonOf(t, d, true, "")
	if _, d := l.Reserve(p); d.Allowed || d.Breaches[0].Code != "over-count-limit" {
		t.Fatalf("a second call beside a held one: %v %v", d.Problems, d.Breaches)
	}
	agents := b.order(1, 1)
	if _, d := held.Reserve(agents); d.Allowed || d.Problems[0].Code != "record-not-sound" {
		t.Fatalf("a held helper's call reserved as the agent's: %v %v", d.Problems, d.Breaches)
	}
	r, d := held.Reserve(p)
	reasonOf(t, d, true, "")
	if r.Pass() != p1 || l.Held() != 0 || l.InFlight() != 1 {
		t.Fatalf("reserved: pass %q, held %d, in flight %d", r.Pass(), l.Held(), l.InFlight())
	}
	r.Release()
}
