package book

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// randomSlipFields draws limits and conditions for tool.a (in GBP) and
// tool.b (in EUR): every kind of limit, with and without a period.
func randomSlipFields(rng *rand.Rand) map[string]any {
	var limits, requires []any
	for _, ac := range []struct{ action, unit string }{{"tool.a", "GBP"}, {"tool.b", "EUR"}} {
		if rng.IntN(2) == 0 {
			limits = append(limits, map[string]any{"action": ac.action, "max": int64(50 + rng.IntN(150)), "unit": ac.unit})
		}
		if rng.IntN(2) == 0 {
			limits = append(limits, map[string]any{"action": ac.action, "each": int64(20 + rng.IntN(60)), "unit": ac.unit})
		}
		if rng.IntN(2) == 0 {
			limits = append(limits, map[string]any{"action": ac.action, "count": int64(2 + rng.IntN(6))})
		}
		if rng.IntN(2) == 0 {
			limits = append(limits, map[string]any{"action": ac.action, "max": int64(30 + rng.IntN(80)), "per": int64(600 + rng.IntN(3000)), "unit": ac.unit})
		}
		if rng.IntN(2) == 0 {
			limits = append(limits, map[string]any{"action": ac.action, "count": int64(1 + rng.IntN(3)), "per": int64(300 + rng.IntN(1800))})
		}
	}
	if rng.IntN(2) == 0 {
		requires = append(requires, map[string]any{"need": "countersignature"})
	}
	if rng.IntN(2) == 0 {
		requires = append(requires, map[string]any{"need": "approval", "action": "tool.a", "above": int64(25 + rng.IntN(30)), "unit": "GBP"})
	}
	if limits == nil {
		limits = []any{}
	}
	if requires == nil {
		requires = []any{}
	}
	return map[string]any{"limits": limits, "requires": requires}
}

func randomProposal(rng *rand.Rand, f *fixture, when time.Time) Proposal {
	p := Proposal{Slip: f.slip.Fingerprint, Action: []string{"tool.a", "tool.a", "tool.a", "tool.b", "tool.b", "tool.b", "tool.c"}[rng.IntN(7)], When: when}
	switch rng.IntN(12) {
	case 0: // no amount
	case 1:
		p.Amount = &record.Amount{Unit: "USD", Value: int64(rng.IntN(50))}
	default:
		unit := "GBP"
		if p.Action == "tool.b" {
			unit = "EUR"
		}
		p.Amount = &record.Amount{Unit: unit, Value: int64(rng.IntN(45))}
	}
	switch rng.IntN(12) {
	case 0:
	case 1:
		p.With = "stranger"
	default:
		p.With = "executor"
	}
	if rng.IntN(3) == 0 {
		p.Details = []record.Detail{{Name: "provared.arguments", SHA256: "3gPRjiRpMJzRl9-iuwEnEm_T5_PuXb9Da6PuS_VlN00"}}
	}
	return p
}

func sameDecision(t *testing.T, step string, got, want Decision) {
	t.Helper()
	if got.Allowed != want.Allowed || !slices.Equal(codes(got.Problems), codes(want.Problems)) ||
		!slices.Equal(codes(got.Breaches), codes(want.Breaches)) || !slices.Equal(got.Needs, want.Needs) {
		t.Fatalf("%s: the ledger says %+v, a check of the whole book says %+v", step, got, want)
	}
	for i := range got.Breaches {
		if got.Breaches[i].Message != want.Breaches[i].Message {
			t.Fatalf("%s: breach %d reads %q, from scratch %q", step, i, got.Breaches[i].Message, want.Breaches[i].Message)
		}
	}
}

// TestLedgerMatchesFromScratch: for random sequences of actions under a
// random slip, the ledger's answer equals the reference's check of the
// whole book at every step, with the calls in flight written into that
// book as the stubs they will become.
func TestLedgerMatchesFromScratch(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 99))
			f := newFixture(t, randomSlipFields(rng))
			path := filepath.Join(t.TempDir(), "book.jsonl")
			b, err := OpenBook(path, f.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			if err := b.Append(f.slipLine()); err != nil {
				t.Fatal(err)
			}
			l := b.Ledger()
			when := f.start
			type pending struct {
				res  *Reservation
				line Line
			}
			var inflight []pending
			seen := map[string]int{}
			defer func() { t.Logf("answers seen: %v", seen) }()
			for step := 0; step < 30; step++ {
				// Mostly forward in time, now and then back.
				when = when.Add(time.Duration(rng.IntN(900)-60) * time.Second)
				p := randomProposal(rng, f, when)
				if p.Action == "tool.a" && p.Amount != nil && rng.IntN(2) == 0 {
					p.Approval = f.approval(t, p)
				}
				// The book as it will be once the calls in flight are written.
				text, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				for _, x := range inflight {
					text = append(text, lineBytes(t, x.line)...)
				}
				name := fmt.Sprintf("step %d (%d in flight)", step, len(inflight))
				want := CheckBefore(text, p, f.opts)
				sameDecision(t, name, l.CheckBefore(p), want)
				for _, x := range append(want.Problems, want.Breaches...) {
					seen[x.Code]++
				}
				if want.Allowed {
					seen["allowed"]++
				}

				switch {
				case step == 22 && seed%2 == 0:
					// The person cancels the slip: the calls in flight are written, then the cancellation.
					for _, x := range inflight {
						if err := b.AppendStub(x.res, x.line); err != nil {
							t.Fatalf("%s: committing a call in flight: %v", name, err)
						}
					}
					inflight = nil
					if err := b.Append(Line{Cancellation: f.cancellationBy(t, when)}); err != nil {
						t.Fatalf("%s: cancelling: %v", name, err)
					}
				case rng.IntN(12) == 0:
					// A refusal changes no total.
					if err := b.Append(Line{Refusal: f.refusal(t, p.Action, when)}); err != nil {
						t.Fatalf("%s: a refusal: %v", name, err)
					}
				case want.Allowed && p.Approval == nil && len(inflight) < 3 && rng.IntN(2) == 0:
					// Leave the call in flight for a while.
					res, d := l.Reserve(p)
					if res == nil {
						t.Fatalf("%s: allowed, then not reserved: %+v", name, d)
					}
					seq := int64(0)
					prev := ""
					if n := len(inflight); n > 0 {
						seq = inflight[n-1].line.Stub.Content["seq"].(int64) + 1
						prev = inflight[n-1].line.Stub.Fingerprint
					} else {
						pos, err := res.Position(context.Background())
						if err != nil {
							t.Fatal(err)
						}
						seq, prev = pos.Seq, pos.Previous
					}
					inflight = append(inflight, pending{res, f.line(t, Position{seq, prev}, p)})
				case len(want.Problems) == 0 && (want.Allowed || rng.IntN(3) == 0):
					// Written at once: inside the slip, or (now and then) a breach on record.
					for _, x := range inflight {
						if err := b.AppendStub(x.res, x.line); err != nil {
							t.Fatalf("%s: committing a call in flight: %v", name, err)
						}
					}
					inflight = nil
					pos := positionOf(t, l, f)
					if err := b.Append(f.line(t, pos, p)); err != nil {
						t.Fatalf("%s: appending: %v", name, err)
					}
				}
			}
			for _, x := range inflight {
				if err := b.AppendStub(x.res, x.line); err != nil {
					t.Fatal(err)
				}
			}
			text, _ := os.ReadFile(path)
			res := CheckBook(text, f.opts)
			if res.Summary.ProblemFound || !res.Summary.Intact {
				t.Fatalf("the book written is not intact: %+v", res.Summary)
			}
			if l.InFlight() != 0 {
				t.Fatalf("%d calls still in flight", l.InFlight())
			}
		})
	}
}

// positionOf reads the next chain position straight from the ledger, for
// a stub written without a reservation.
func positionOf(t *testing.T, l *Ledger, f *fixture) Position {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.r.slips[f.slip.Fingerprint]
	return Position{Seq: st.next, Previous: st.last}
}

// TestReservationsCountInFlight: calls running together cannot jointly
// pass a limit: of eight calls of 30 GBP under a limit of 100 GBP, exactly
// three are reserved, and a released one frees its share.
func TestReservationsCountInFlight(t *testing.T) {
	f := newFixture(t, map[string]any{"limits": []any{map[string]any{"action": "tool.a", "max": int64(100), "unit": "GBP"}}})
	b, err := OpenBook(filepath.Join(t.TempDir(), "book.jsonl"), f.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Append(f.slipLine()); err != nil {
		t.Fatal(err)
	}
	p := Proposal{Slip: f.slip.Fingerprint, Action: "tool.a", Amount: &record.Amount{Unit: "GBP", Value: 30}, With: "executor", When: f.start.Add(time.Hour)}
	var mu sync.Mutex
	var got []*Reservation
	var refused []Decision
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			res, d := b.Ledger().Reserve(p)
			mu.Lock()
			defer mu.Unlock()
			if res != nil {
				got = append(got, res)
			} else {
				refused = append(refused, d)
			}
		})
	}
	wg.Wait()
	if len(got) != 3 || len(refused) != 5 {
		t.Fatalf("%d reserved, %d refused; want 3 and 5", len(got), len(refused))
	}
	for _, d := range refused {
		if !slices.Equal(codes(d.Breaches), []string{"over-limit"}) {
			t.Fatalf("refused with %v, want over-limit", d.Breaches)
		}
	}
	for _, r := range got {
		r.Release()
	}
	if n := b.Ledger().InFlight(); n != 0 {
		t.Fatalf("%d in flight after every release", n)
	}
	// Reserved one after another: a released share is freed at once.
	got = nil
	for range 3 {
		res, d := b.Ledger().Reserve(p)
		if res == nil {
			t.Fatalf("not reserved: %+v", d)
		}
		got = append(got, res)
	}
	got[1].Release()
	if res, d := b.Ledger().Reserve(p); res == nil {
		t.Fatalf("a released share was not freed: %+v", d)
	}
	// Stubs go in in reservation order: the third waits for the first.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := got[2].Position(ctx); err == nil {
		t.Fatal("a later reservation got its position before an earlier one was written")
	}
	pos, err := got[0].Position(context.Background())
	if err != nil || pos.Seq != 0 || pos.Previous != "" {
		t.Fatalf("first position %+v, %v", pos, err)
	}
	first := f.line(t, pos, p)
	if err := b.AppendStub(got[2], first); err == nil {
		t.Fatal("a stub was written out of turn")
	}
	if err := b.AppendStub(got[0], first); err != nil {
		t.Fatal(err)
	}
	pos, err = got[2].Position(context.Background())
	if err != nil || pos.Seq != 1 || pos.Previous != first.Stub.Fingerprint {
		t.Fatalf("second position %+v, %v", pos, err)
	}
	if err := b.AppendStub(got[2], f.line(t, pos, p)); err != nil {
		t.Fatal(err)
	}
	// Two stubs (60) and one call in flight (30) leave room for nothing more.
	if d := b.Ledger().CheckBefore(p); d.Allowed {
		t.Fatalf("allowed with 90 of 100 used: %+v", d)
	}
}

// TestRefusesWithoutTrustedPasskey: with no trusted passkey thumbprint the
// ledger refuses everything, whatever the book holds.
func TestRefusesWithoutTrustedPasskey(t *testing.T) {
	f := newFixture(t, nil)
	text := lineBytes(t, f.slipLine())
	for _, opts := range []Options{{}, {IssuerKeys: []string{}}} {
		path := filepath.Join(t.TempDir(), "book.jsonl")
		if err := os.WriteFile(path, text, 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := OpenBook(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		p := Proposal{Slip: f.slip.Fingerprint, Action: "tool.a", With: "executor", When: f.start.Add(time.Minute)}
		d := b.Ledger().CheckBefore(p)
		if d.Allowed || !slices.Equal(codes(d.Problems), []string{"record-not-sound"}) {
			t.Fatalf("options %+v: %+v, want record-not-sound", opts, d)
		}
		if res, _ := b.Ledger().Reserve(p); res != nil {
			t.Fatal("reserved without a trusted passkey")
		}
		b.Close()
	}
	// With the passkey trusted, the same action is allowed.
	if d := CheckBefore(text, Proposal{Slip: f.slip.Fingerprint, Action: "tool.a", With: "executor", When: f.start.Add(time.Minute)}, f.opts); !d.Allowed {
		t.Fatalf("not allowed with the passkey trusted: %+v", d)
	}
}
