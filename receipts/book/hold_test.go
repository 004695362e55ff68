package book

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

func openHoldBook(t *testing.T, fields map[string]any) (*fixture, *Book, string) {
	t.Helper()
	f := newFixture(t, fields)
	path := filepath.Join(t.TempDir(), "book.jsonl")
	b, err := OpenBook(path, f.opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	if err := b.Append(f.slipLine()); err != nil {
		t.Fatal(err)
	}
	return f, b, path
}

func gbp(f *fixture, v int64, when time.Time) Proposal {
	return Proposal{Slip: f.slip.Fingerprint, Action: "tool.a", Amount: &record.Amount{Unit: "GBP", Value: v}, With: "executor", When: when}
}

// TestHeldCountsWithoutOrder: a held call counts against the limit, does not
// make a later reservation wait for its position, and takes its place in the
// order only when reserved; a release frees its share.
func TestHeldCountsWithoutOrder(t *testing.T) {
	f, b, _ := openHoldBook(t, map[string]any{"limits": []any{map[string]any{"action": "tool.a", "max": int64(100), "unit": "GBP"}}})
	l := b.Ledger()
	when := f.start.Add(time.Hour)
	held, d := l.Hold(gbp(f, 60, when))
	if held == nil {
		t.Fatalf("not held: %+v", d)
	}
	// Two held calls that would jointly pass the limit: the second is refused at once.
	if h2, d := l.Hold(gbp(f, 60, when)); h2 != nil || !slices.Equal(codes(d.Breaches), []string{"over-limit"}) {
		t.Fatalf("a second hold of 60 under 100 with 60 held: %v %+v", h2, d)
	}
	if res, d := l.Reserve(gbp(f, 50, when)); res != nil || d.Allowed {
		t.Fatal("a reservation passed the limit with a held call counted")
	}
	if d := l.CheckBefore(gbp(f, 40, when)); !d.Allowed {
		t.Fatalf("40 more with 60 held: %+v", d)
	}
	later, _ := l.Reserve(gbp(f, 40, when))
	if later == nil {
		t.Fatal("not reserved")
	}
	// The held call does not hold up the later call's position.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pos, err := later.Position(ctx)
	if err != nil || pos.Seq != 0 {
		t.Fatalf("a later call waited for a held one: %+v %v", pos, err)
	}
	if n := l.Held(); n != 1 {
		t.Fatalf("%d held, want 1", n)
	}
	res, d := held.Reserve(gbp(f, 60, when.Add(time.Minute)))
	if res == nil {
		t.Fatalf("the held call's own share refused it: %+v", d)
	}
	if n := l.Held(); n != 0 || l.InFlight() != 2 {
		t.Fatalf("held %d, in flight %d; want 0 and 2", n, l.InFlight())
	}
	// Reserved after the later call: it waits for it.
	short, cancelShort := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancelShort()
	if _, err := res.Position(short); err == nil {
		t.Fatal("the approved call got its position before the call reserved earlier")
	}
	first := f.line(t, pos, gbp(f, 40, when))
	if err := b.AppendStub(later, first); err != nil {
		t.Fatal(err)
	}
	pos2, err := res.Position(ctx)
	if err != nil || pos2.Seq != 1 {
		t.Fatalf("second position %+v %v", pos2, err)
	}
	if err := b.AppendStub(res, f.line(t, pos2, gbp(f, 60, when.Add(time.Minute)))); err != nil {
		t.Fatal(err)
	}
	if _, d := held.Reserve(gbp(f, 60, when)); d.Allowed {
		t.Fatal("a held call was reserved twice")
	}
	held.Release() // does nothing now
	if l.InFlight() != 0 {
		t.Fatalf("%d in flight", l.InFlight())
	}
	// Released: the share is free again.
	h3, _ := l.Hold(gbp(f, 0, when.Add(time.Minute)))
	if h3 == nil {
		t.Fatal("not held")
	}
	h3.Release()
	h3.Release()
	if l.InFlight() != 0 || l.Held() != 0 {
		t.Fatal("a release left a share counted")
	}
}

// TestHeldReserveRechecks: a held call that the book no longer allows at
// its approval (another call used the room meanwhile is impossible, so the
// slip's period or count decides) stays held and refused until released.
func TestHeldReserveRechecks(t *testing.T) {
	f, b, _ := openHoldBook(t, map[string]any{"limits": []any{map[string]any{"action": "tool.a", "count": int64(2)}}})
	l := b.Ledger()
	when := f.start.Add(time.Hour)
	h1, _ := l.Hold(gbp(f, 1, when))
	h2, _ := l.Hold(gbp(f, 1, when))
	if h1 == nil || h2 == nil {
		t.Fatal("two calls under a count of 2 not held")
	}
	if h, d := l.Hold(gbp(f, 1, when)); h != nil || !slices.Equal(codes(d.Breaches), []string{"over-count-limit"}) {
		t.Fatalf("a third held call under a count of 2: %+v", d)
	}
	// Rechecked as another action (outside the slip): refused, still held.
	p := gbp(f, 1, when)
	p.Action = "tool.c"
	if res, d := h1.Reserve(p); res != nil || d.Allowed {
		t.Fatal("reserved as an action outside the slip")
	}
	if l.Held() != 2 {
		t.Fatalf("held %d after a refused reserve, want 2", l.Held())
	}
	r1, _ := h1.Reserve(gbp(f, 1, when))
	r2, _ := h2.Reserve(gbp(f, 1, when))
	if r1 == nil || r2 == nil {
		t.Fatal("both approved calls under a count of 2 refused")
	}
	r1.Release()
	r2.Release()
}

// TestHeldPropertyNeverOverspends: random holds, reservations, approvals,
// releases and commits under random limits: the ledger's answer equals a
// check of the whole book with every held and in-flight call written in,
// and everything written stays inside the slip.
func TestHeldPropertyNeverOverspends(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			fields := randomSlipFields(rng)
			fields["requires"] = []any{}
			// Periods are left out: an approved call's stub is dated at its
			// approval, later than the time it was held and counted at.
			fields["limits"] = slices.DeleteFunc(fields["limits"].([]any), func(x any) bool { _, per := x.(map[string]any)["per"]; return per })
			f, b, path := openHoldBook(t, fields)
			l := b.Ledger()
			when := f.start.Add(time.Hour)
			type heldCall struct {
				h *Held
				p Proposal
			}
			type flying struct {
				res *Reservation
				p   Proposal
			}
			lastWhen := when // the latest time a call was reserved at
			var held []heldCall
			var inflight []flying
			commitAll := func() {
				for _, x := range inflight {
					pos, err := x.res.Position(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					if err := b.AppendStub(x.res, f.line(t, pos, x.p)); err != nil {
						t.Fatal(err)
					}
				}
				inflight = nil
			}
			for step := range 40 {
				when = when.Add(time.Duration(rng.IntN(300)) * time.Second)
				p := randomProposal(rng, f, when)
				// What the book would say with every counted call written in.
				text, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				st := l.r.slips[f.slip.Fingerprint]
				seq, prev := st.next, st.last
				counted := append([]flying(nil), inflight...)
				for _, h := range held {
					counted = append(counted, flying{nil, h.p})
				}
				// Written in the order of their times, as the chain needs.
				slices.SortStableFunc(counted, func(a, b flying) int { return a.p.When.Compare(b.p.When) })
				for _, x := range counted {
					if x.p.When.Before(lastWhen) {
						x.p.When = lastWhen
					}
					ln := f.line(t, Position{seq, prev}, x.p)
					text = append(text, lineBytes(t, ln)...)
					seq, prev = seq+1, ln.Stub.Fingerprint
				}
				want := CheckBefore(text, p, f.opts)
				sameDecision(t, fmt.Sprintf("step %d", step), l.CheckBefore(p), want)
				switch op := rng.IntN(5); {
				case op <= 1 && len(held) < 4:
					h, d := l.Hold(p)
					if (h != nil) != want.Allowed {
						t.Fatalf("step %d: hold %v, check %+v", step, h != nil, d)
					}
					if h != nil {
						held = append(held, heldCall{h, p})
					}
				case op == 2 && len(held) > 0:
					i := rng.IntN(len(held))
					x := held[i]
					held = slices.Delete(held, i, i+1)
					if rng.IntN(3) == 0 {
						x.h.Release()
						break
					}
					// Approved: rechecked at a later time; the time of its stub is the time of the approval.
					x.p.When = when
					res, d := x.h.Reserve(x.p)
					if res != nil {
						lastWhen = when
					}
					if res == nil {
						// Only a period can have moved; the call stays held until released.
						x.h.Release()
						t.Logf("step %d: an approved call refused at its recheck: %v", step, codes(d.Breaches))
						break
					}
					inflight = append(inflight, flying{res, x.p})
				case op == 3:
					commitAll()
				case op == 4 && len(inflight) < 3:
					if res, _ := l.Reserve(p); res != nil {
						inflight = append(inflight, flying{res, p})
						lastWhen = when
					}
				}
			}
			for _, x := range held {
				x.h.Release()
			}
			commitAll()
			text, _ := os.ReadFile(path)
			res := CheckBook(text, f.opts)
			if res.Summary.ProblemFound || !res.Summary.Intact || res.Summary.FirstBreach != nil {
				t.Fatalf("the book written is not intact and inside its slip: %+v", res.Summary)
			}
			if l.InFlight() != 0 || l.Held() != 0 {
				t.Fatalf("%d in flight, %d held at the end", l.InFlight(), l.Held())
			}
		})
	}
}
