package book

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/passkey"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
)

func (f *fixture) cancellation(t *testing.T, pk *passkey.DevPasskey, when time.Time) *record.Record {
	t.Helper()
	r, err := pk.SignRecord(record.Cancellation, slip.CancellationFields{Slip: f.slip.Fingerprint, When: when}.Content())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (f *fixture) cancellationBy(t *testing.T, when time.Time) *record.Record {
	return f.cancellation(t, f.pk, when)
}

func (f *fixture) acknowledgement(t *testing.T, cancellation string, when time.Time) *record.Record {
	t.Helper()
	c := map[string]any{"type": "provared.acknowledgement.v0", "id": canon.NewID(), "slip": f.slip.Fingerprint,
		"cancellation": cancellation, "when": canon.FormatTime(when)}
	r, err := record.Sign(context.Background(), record.Acknowledgement, c, f.agent)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (f *fixture) refusal(t *testing.T, action string, when time.Time) *record.Record {
	t.Helper()
	c := map[string]any{"type": "provared.refusal.v0", "id": canon.NewID(), "slip": f.slip.Fingerprint, "action": action,
		"by": map[string]any{"keys": f.exec.Keys().Value(), "name": "the executor"}, "reason": "not-in-slip", "when": canon.FormatTime(when)}
	r, err := record.Sign(context.Background(), record.Refusal, c, f.exec)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func kindsOf(res Result) [][]string {
	var out [][]string
	for _, e := range res.Entries {
		out = append(out, append(append([]string{e.Kind}, codes(e.Problems)...), codes(e.Breaches)...))
	}
	return out
}

// TestCancellationAcknowledgementAndRefusal: a refusal is the service's
// own statement; a cancellation puts every later stub outside the slip and
// stops the check before acting; the agent's acknowledgement names it.
func TestCancellationAcknowledgementAndRefusal(t *testing.T) {
	f := newFixture(t, nil)
	b, path := openEmpty(t, f)
	at := func(m int) time.Time { return f.start.Add(time.Duration(m) * time.Minute) }
	p := func(m int) Proposal {
		return Proposal{Slip: f.slip.Fingerprint, Action: "tool.a", With: "executor", When: at(m)}
	}
	if err := b.Append(f.slipLine(), f.line(t, Position{}, p(1)), Line{Refusal: f.refusal(t, "tool.z", at(2))}); err != nil {
		t.Fatal(err)
	}
	if d := b.Ledger().CheckBefore(p(3)); !d.Allowed {
		t.Fatalf("before the cancellation: %+v", d)
	}
	// A cancellation signed by another passkey is refused on append.
	stranger, err := passkey.NewDevPasskey("https://sign.example.org", "example.org")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Append(Line{Cancellation: f.cancellation(t, stranger, at(3))}); err == nil {
		t.Fatal("a cancellation by another passkey was appended")
	}
	cancel := f.cancellation(t, f.pk, at(3))
	if err := b.Append(Line{Cancellation: cancel}); err != nil {
		t.Fatal(err)
	}
	d := b.Ledger().CheckBefore(p(4))
	if d.Allowed || !slices.Equal(codes(d.Breaches), []string{"after-cancellation"}) || d.Reason() != "not-in-slip" {
		t.Fatalf("after the cancellation: %+v", d)
	}
	if res, _ := b.Ledger().Reserve(p(4)); res != nil {
		t.Fatal("reserved after the cancellation")
	}
	// The agent acknowledges; one naming no cancellation in the book is refused.
	if err := b.Append(Line{Acknowledgement: f.acknowledgement(t, f.slip.Fingerprint, at(4))}); err == nil {
		t.Fatal("an acknowledgement of nothing was appended")
	}
	if err := b.Append(Line{Acknowledgement: f.acknowledgement(t, cancel.Fingerprint, at(4))}); err != nil {
		t.Fatal(err)
	}
	// A stub after it is a breach on record (written here only to see the checker say so).
	last := positionOf(t, b.Ledger(), f)
	if err := b.Append(f.line(t, last, p(5))); err != nil {
		t.Fatal(err)
	}
	text := readFile(t, path)
	res := CheckBook(text, f.opts)
	want := [][]string{{"slip"}, {"stub"}, {"refusal"}, {"cancellation"}, {"acknowledgement"}, {"stub", "after-cancellation"}}
	if got := kindsOf(res); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("entries %v, want %v", got, want)
	}
	c := res.Summary.Counts
	if !res.Summary.Intact || res.Summary.WithinSlips || c.Refusals != 1 || c.Cancellations != 1 || c.Acknowledgements != 1 || c.Stubs != 2 {
		t.Fatalf("summary %+v", res.Summary)
	}
	// The same book read afresh gives the ledger's answer.
	if got, want := b.Ledger().CheckBefore(p(6)), CheckBefore(text, p(6), f.opts); !slices.Equal(codes(got.Breaches), codes(want.Breaches)) || got.Allowed != want.Allowed {
		t.Fatalf("ledger %+v, from scratch %+v", got, want)
	}
}

// TestBrokenRecordsInABook: what the checker finds for records that do
// not check, line by line, with the reference's codes.
func TestBrokenRecordsInABook(t *testing.T) {
	f := newFixture(t, nil)
	other := newFixture(t, nil) // another slip, same keys: its records name another slip
	at := func(m int) time.Time { return f.start.Add(time.Duration(m) * time.Minute) }
	p := Proposal{Slip: f.slip.Fingerprint, Action: "tool.a", With: "executor", When: at(1)}
	good := f.line(t, Position{}, p)
	wrongCounter := good
	wrongCounter.Countersignature = f.countersign(t, f.stub(t, Position{}, p, ""), at(1))
	var text []byte
	for _, l := range []Line{
		{Refusal: f.refusal(t, "tool.z", at(0))}, // before its slip
		f.slipLine(),
		wrongCounter,
		{Acknowledgement: f.acknowledgement(t, canon.Fingerprint([]byte("x")), at(2))},
		{Cancellation: other.cancellation(t, other.pk, at(3))},
	} {
		text = append(text, lineBytes(t, l)...)
	}
	res := CheckBook(text, f.opts)
	want := [][]string{
		{"refusal", "slip-missing"},
		{"slip"},
		{"stub", "countersignature-wrong-stub"},
		{"acknowledgement", "cancellation-not-found"},
		{"cancellation", "slip-missing"},
	}
	if got := kindsOf(res); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("entries %v, want %v", got, want)
	}
	if res.Summary.Intact || res.Summary.WithinSlips || !res.Summary.ProblemFound {
		t.Fatalf("summary %+v", res.Summary)
	}
}

// TestProposalFromValue: a proposal handed over as a value is refused
// where the reference refuses it, with its code.
func TestProposalFromValue(t *testing.T) {
	f := newFixture(t, nil)
	text := lineBytes(t, f.slipLine())
	base := func() map[string]any {
		return map[string]any{"slip": f.slip.Fingerprint, "action": "tool.a", "with": "executor", "when": f.start.Add(time.Minute).UnixMilli()}
	}
	for name, tc := range map[string]struct {
		change func(map[string]any)
		code   string
	}{
		"inside the slip":     {func(map[string]any) {}, ""},
		"an unknown member":   {func(v map[string]any) { v["colour"] = "red" }, "bad-field"},
		"no action":           {func(v map[string]any) { delete(v, "action") }, "bad-field"},
		"an empty list":       {func(v map[string]any) { v["details"] = []any{} }, "bad-field"},
		"a reserved action":   {func(v map[string]any) { v["action"] = "provared.nothing" }, "bad-field"},
		"a pass":              {func(v map[string]any) { v["pass"] = f.slip.Fingerprint }, "pass-missing"},
		"terms":               {func(v map[string]any) { v["terms"] = f.slip.Fingerprint }, "terms-not-found"},
		"an approval of junk": {func(v map[string]any) { v["approval"] = map[string]any{"payload": "x"} }, "bad-envelope"},
	} {
		v := base()
		tc.change(v)
		d := CheckBefore(text, ProposalFromValue(v), f.opts)
		got := ""
		if len(d.Problems) > 0 {
			got = d.Problems[0].Code
		}
		if got != tc.code || d.Allowed != (tc.code == "") {
			t.Errorf("%s: %+v, want %q", name, d, tc.code)
		}
	}
}
