package book

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/pass"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
)

// A book with passes, built line by line from real records: the slip's
// agent, helpers under passes, each chain kept apart.

func signer(t testing.TB, b byte) *jwk.LocalSigner {
	t.Helper()
	s, err := jwk.NewLocalSigner(seeds(b))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type passBook struct {
	t      testing.TB
	f      *fixture
	lines  []Line
	chains map[string]*Position // by pass ("" for the slip's own agent)
}

func newPassBook(t testing.TB, fields map[string]any) *passBook {
	t.Helper()
	f := newFixture(t, fields)
	return &passBook{t: t, f: f, lines: []Line{f.slipLine()}, chains: map[string]*Position{}}
}

// passFields are the fields of a pass from the fixture's slip to who,
// valid as long as the slip, handing on tool.a.
func (b *passBook) passFields(who jwk.Signer, from string) pass.Fields {
	return pass.Fields{
		Slip: b.f.slip.Fingerprint, From: from, To: pass.Helper{Name: "helper", Keys: who.Keys()},
		Actions: []string{"tool.a"}, ValidFrom: b.f.start, ValidUntil: b.f.slip.ValidUntil, When: b.f.start,
	}
}

// addPass signs a pass with writer and puts it in the book; it returns
// its fingerprint.
func (b *passBook) addPass(writer jwk.Signer, pf pass.Fields) string {
	b.t.Helper()
	rec, err := pf.Sign(context.Background(), writer)
	if err != nil {
		b.t.Fatalf("signing a pass: %v", err)
	}
	b.lines = append(b.lines, Line{Pass: rec})
	return rec.Fingerprint
}

// helperStub signs, with s, a stub of p in the chain of passFP ("" for the
// agent's chain), writes the pass member when named is true, and puts the
// line in the book (countersigned when it names the executor).
func (b *passBook) stub(s jwk.Signer, passFP string, named bool, p Proposal) *record.Record {
	b.t.Helper()
	pos := b.chains[passFP]
	if pos == nil {
		pos = &Position{}
		b.chains[passFP] = pos
	}
	c := b.f.stubContent(*pos, p, "")
	c["slip"] = p.Slip
	if named {
		c["pass"] = passFP
	}
	rec, err := record.Sign(context.Background(), record.Stub, c, s)
	if err != nil {
		b.t.Fatalf("signing a stub: %v", err)
	}
	l := Line{Stub: rec}
	if p.With == "executor" {
		l.Countersignature = b.f.countersign(b.t, rec, p.When)
	}
	b.lines = append(b.lines, l)
	pos.Seq, pos.Previous = pos.Seq+1, rec.Fingerprint
	return rec
}

func (b *passBook) text() []byte {
	b.t.Helper()
	var out []byte
	for _, l := range b.lines {
		out = append(out, lineBytes(b.t, l)...)
	}
	return out
}

func (b *passBook) check() Result { return CheckBook(b.text(), b.f.opts) }

func (b *passBook) order(minutes int, value int64) Proposal {
	return Proposal{Slip: b.f.slip.Fingerprint, Action: "tool.a", Amount: &record.Amount{Unit: "GBP", Value: value}, With: "executor", When: b.f.start.Add(time.Duration(minutes) * time.Minute)}
}

func wantEntries(t *testing.T, res Result, want [][]string) {
	t.Helper()
	if got := kindsOf(res); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("entries\n%v\nwant\n%v", got, want)
	}
}

// TestPassesChainsAndTotals: each helper has a chain of its own; a pass's
// totals take in its own stubs and those of the passes handed on from it;
// the slip's totals take in every chain; a code already given nearer the
// slip is not given again.
func TestPassesChainsAndTotals(t *testing.T) {
	b := newPassBook(t, map[string]any{"passes": int64(2), "limits": []any{map[string]any{"action": "tool.a", "max": int64(100), "unit": "GBP"}}})
	h1, h2 := signer(t, 3), signer(t, 5)
	pf := b.passFields(h1, "")
	pf.Limits = []slip.Limit{{Action: "tool.a", Kind: "max", Value: 30, Unit: "GBP"}}
	p1 := b.addPass(b.f.agent, pf)
	b.stub(b.f.agent, "", false, b.order(1, 10))
	b.stub(h1, p1, true, b.order(2, 20))
	b.stub(h1, p1, true, b.order(3, 15)) // the pass's total: 35
	p2 := b.addPass(h1, b.passFields(h2, p1))
	b.stub(h2, p2, true, b.order(4, 1))          // the earlier pass's total: 36
	b.stub(b.f.agent, "", false, b.order(5, 60)) // the slip's total: 106
	b.stub(h1, p1, true, b.order(6, 5))          // over both the slip's and the pass's: said once
	res := b.check()
	wantEntries(t, res, [][]string{
		{"slip"}, {"pass"}, {"stub"}, {"stub"}, {"stub", "over-limit"}, {"pass"},
		{"stub", "over-limit"}, {"stub", "over-limit"}, {"stub", "over-limit"},
	})
	if m := res.Entries[4].Breaches[0].Message; !strings.Contains(m, "the pass's limit is 30") {
		t.Errorf("the helper's own pass is not named: %s", m)
	}
	if m := res.Entries[6].Breaches[0].Message; !strings.Contains(m, "the earlier pass's limit is 30") {
		t.Errorf("the pass above is not named: %s", m)
	}
	if m := res.Entries[8].Breaches[0].Message; !strings.Contains(m, "the slip's limit") {
		t.Errorf("the slip's finding is not the one kept: %s", m)
	}
	if res.Entries[3].Pass != p1 || res.Entries[6].Pass != p2 || res.Entries[2].Pass != "" {
		t.Errorf("the stubs' passes: %q %q %q", res.Entries[2].Pass, res.Entries[3].Pass, res.Entries[6].Pass)
	}
	s := res.Summary
	if !s.Intact || s.WithinSlips || s.Counts.Passes != 2 || s.Counts.Stubs != 6 || *s.FirstBreach != 4 {
		t.Fatalf("summary %+v", s)
	}
}

// TestPassPeriodsOnce: a period limit of a pass is settled with the
// slip's; a stub that the slip's period already reports is not reported
// again for the pass.
func TestPassPeriodsOnce(t *testing.T) {
	b := newPassBook(t, map[string]any{"passes": int64(1), "limits": []any{map[string]any{"action": "tool.a", "max": int64(50), "per": int64(3600), "unit": "GBP"}}})
	h1 := signer(t, 3)
	pf := b.passFields(h1, "")
	pf.Limits = []slip.Limit{{Action: "tool.a", Kind: "max", Value: 20, Per: 3600, Unit: "GBP"}}
	p1 := b.addPass(b.f.agent, pf)
	b.stub(h1, p1, true, b.order(1, 15))
	b.stub(h1, p1, true, b.order(2, 10))         // the pass's hour: 25
	b.stub(b.f.agent, "", false, b.order(3, 30)) // the slip's hour: 55, and only the slip's
	b.stub(h1, p1, true, b.order(4, 1))          // the slip's hour 56 and the pass's 26: the slip's alone
	res := b.check()
	wantEntries(t, res, [][]string{
		{"slip"}, {"pass"}, {"stub"}, {"stub", "over-period-limit"}, {"stub", "over-period-limit"}, {"stub", "over-period-limit"},
	})
	if m := res.Entries[3].Breaches[0].Message; !strings.Contains(m, "the pass's limit") {
		t.Errorf("the pass's period: %s", m)
	}
	if m := res.Entries[5].Breaches[0].Message; !strings.Contains(m, "the slip's limit") {
		t.Errorf("the slip's period is not the one kept: %s", m)
	}
}

// TestPassFindings: what a checker reports about passes and the stubs
// under them, each in a book of its own, including the hostile ones: a
// pass signed by someone else, a pass wider than its slip, a helper's stub
// in the agent's chain or signed with the agent's keys.
func TestPassFindings(t *testing.T) {
	h1, h2, stranger := signer(t, 3), signer(t, 5), signer(t, 11)
	for name, tc := range map[string]struct {
		fields map[string]any
		build  func(b *passBook)
		want   [][]string
	}{
		"a pass signed by the helper itself": {nil, func(b *passBook) {
			p := b.addPass(h1, b.passFields(h1, ""))
			b.stub(h1, p, true, b.order(1, 1))
		}, [][]string{{"slip"}, {"pass", "signature-invalid"}, {"stub", "pass-missing"}}},
		"a pass signed by a stranger": {nil, func(b *passBook) {
			b.addPass(stranger, b.passFields(stranger, ""))
		}, [][]string{{"slip"}, {"pass", "signature-invalid"}}},
		"a helper's pass signed by the slip's agent": {map[string]any{"passes": int64(2)}, func(b *passBook) {
			p1 := b.addPass(b.f.agent, b.passFields(h1, ""))
			b.addPass(b.f.agent, b.passFields(h2, p1))
		}, [][]string{{"slip"}, {"pass"}, {"pass", "signature-invalid"}}},
		"a pass from a pass not in the book": {nil, func(b *passBook) {
			b.addPass(h1, b.passFields(h2, b.f.slip.Fingerprint))
		}, [][]string{{"slip"}, {"pass", "pass-missing"}}},
		"a pass wider than its slip": {nil, func(b *passBook) {
			pf := b.passFields(h1, "")
			pf.Actions = []string{"tool.a", "tool.c"}
			b.addPass(b.f.agent, pf)
			pf = b.passFields(h1, "")
			pf.ValidUntil = pf.ValidUntil.Add(time.Second)
			b.addPass(b.f.agent, pf)
		}, [][]string{{"slip"}, {"pass", "pass-wider"}, {"pass", "pass-wider"}}},
		"a helper's pass wider than its own": {map[string]any{"passes": int64(2)}, func(b *passBook) {
			p1 := b.addPass(b.f.agent, b.passFields(h1, ""))
			pf := b.passFields(h2, p1)
			pf.Actions = []string{"tool.b"}
			p2 := b.addPass(h1, pf)
			b.stub(h2, p2, true, Proposal{Slip: b.f.slip.Fingerprint, Action: "tool.b", When: b.f.start.Add(time.Minute)})
		}, [][]string{{"slip"}, {"pass"}, {"pass", "pass-wider"}, {"stub", "action-not-allowed"}}},
		"a pass dated before its slip": {nil, func(b *passBook) {
			pf := b.passFields(h1, "")
			pf.When = b.f.start.Add(-time.Second)
			b.addPass(b.f.agent, pf)
		}, [][]string{{"slip"}, {"pass", "outside-valid-time"}}},
		"a slip that allows no pass": {map[string]any{}, func(b *passBook) {
			p1 := b.addPass(b.f.agent, b.passFields(h1, ""))
			b.stub(h1, p1, true, b.order(1, 1))
			b.addPass(h1, b.passFields(h2, p1))
		}, [][]string{{"slip"}, {"pass", "pass-not-allowed"}, {"stub", "pass-not-allowed"}, {"pass", "pass-not-allowed"}}},
		"one pass more than the slip allows": {nil, func(b *passBook) {
			p1 := b.addPass(b.f.agent, b.passFields(h1, ""))
			p2 := b.addPass(h1, b.passFields(h2, p1))
			b.stub(h2, p2, true, b.order(1, 1))
		}, [][]string{{"slip"}, {"pass"}, {"pass", "pass-not-allowed"}, {"stub", "pass-not-allowed"}}},
		"a pass after the slip was cancelled": {nil, func(b *passBook) {
			p1 := b.addPass(b.f.agent, b.passFields(h1, ""))
			b.lines = append(b.lines, Line{Cancellation: b.f.cancellationBy(t, b.f.start.Add(time.Minute))})
			b.addPass(b.f.agent, b.passFields(h2, ""))
			b.stub(h1, p1, true, b.order(2, 1))
		}, [][]string{{"slip"}, {"pass"}, {"cancellation"}, {"pass", "after-cancellation"}, {"stub", "after-cancellation"}}},
		"a helper's stub signed with the agent's keys": {nil, func(b *passBook) {
			p1 := b.addPass(b.f.agent, b.passFields(h1, ""))
			b.stub(b.f.agent, p1, true, b.order(1, 1))
		}, [][]string{{"slip"}, {"pass"}, {"stub", "signature-invalid"}}},
		"a helper's stub in the agent's chain": {nil, func(b *passBook) {
			b.addPass(b.f.agent, b.passFields(h1, ""))
			b.stub(h1, "", false, b.order(1, 1))
		}, [][]string{{"slip"}, {"pass"}, {"stub", "signature-invalid"}}},
		"a helper's chain out of order": {nil, func(b *passBook) {
			p1 := b.addPass(b.f.agent, b.passFields(h1, ""))
			b.stub(b.f.agent, "", false, b.order(1, 1))
			b.chains[p1] = &Position{Seq: 1, Previous: b.f.slip.Fingerprint}
			b.stub(h1, p1, true, b.order(2, 1))
		}, [][]string{{"slip"}, {"pass"}, {"stub"}, {"stub", "chain-broken"}}},
		"a helper's stub dated before the last of its chain": {nil, func(b *passBook) {
			p1 := b.addPass(b.f.agent, b.passFields(h1, ""))
			b.stub(h1, p1, true, b.order(5, 1))
			b.stub(b.f.agent, "", false, b.order(1, 1)) // the agent's chain is its own
			b.stub(h1, p1, true, b.order(4, 1))
		}, [][]string{{"slip"}, {"pass"}, {"stub"}, {"stub"}, {"stub", "time-went-backwards"}}},
		"the same pass twice": {nil, func(b *passBook) {
			b.addPass(b.f.agent, b.passFields(h1, ""))
			b.lines = append(b.lines, b.lines[1])
		}, [][]string{{"slip"}, {"pass"}, {"pass", "duplicate-id", "duplicate-id"}}},
		"an acknowledgement by a helper": {nil, func(b *passBook) {
			p1 := b.addPass(b.f.agent, b.passFields(h1, ""))
			cancel := b.f.cancellationBy(t, b.f.start.Add(time.Minute))
			b.lines = append(b.lines, Line{Cancellation: cancel})
			for _, s := range []jwk.Signer{h1, b.f.agent} {
				c := map[string]any{"type": "provared.acknowledgement.v0", "id": canon.NewID(), "slip": b.f.slip.Fingerprint,
					"cancellation": cancel.Fingerprint, "pass": p1, "when": canon.FormatTime(b.f.start.Add(2 * time.Minute))}
				a, err := record.Sign(context.Background(), record.Acknowledgement, c, s)
				if err != nil {
					t.Fatal(err)
				}
				b.lines = append(b.lines, Line{Acknowledgement: a})
			}
		}, [][]string{{"slip"}, {"pass"}, {"cancellation"}, {"acknowledgement"}, {"acknowledgement", "signature-invalid"}}},
	} {
		t.Run(name, func(t *testing.T) {
			fields := tc.fields
			if fields == nil {
				fields = map[string]any{"passes": int64(1)}
			}
			b := newPassBook(t, fields)
			tc.build(b)
			res := b.check()
			wantEntries(t, res, tc.want)
			if res.Summary.WithinSlips {
				t.Fatal("a book with a finding reads as within its slips")
			}
		})
	}
}

// TestPassTooDeep: the eleventh pass in a row is a problem, whatever the
// slip allows; the ten before it are sound.
func TestPassTooDeep(t *testing.T) {
	b := newPassBook(t, map[string]any{"passes": int64(10)})
	writer, from := jwk.Signer(b.f.agent), ""
	for i := range 11 {
		helper := signer(t, byte(20+2*i))
		from = b.addPass(writer, b.passFields(helper, from))
		writer = helper
	}
	res := b.check()
	want := [][]string{{"slip"}}
	for range 10 {
		want = append(want, []string{"pass"})
	}
	wantEntries(t, res, append(want, []string{"pass", "pass-too-deep"}))
}
