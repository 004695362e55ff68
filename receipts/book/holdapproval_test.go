package book

import (
	"slices"
	"testing"
	"time"
)

// TestHoldForApproval: a call refused only for the missing approval is held
// and counts against the limit; a call refused for anything else is not
// held; Flying counts the reservations not yet in the book.
func TestHoldForApproval(t *testing.T) {
	f, b, _ := openHoldBook(t, map[string]any{
		"limits":   []any{map[string]any{"action": "tool.a", "max": int64(100), "unit": "GBP"}},
		"requires": []any{map[string]any{"need": "approval", "action": "tool.a"}},
	})
	l := b.Ledger()
	when := f.start.Add(time.Hour)
	if h, d := l.Hold(gbp(f, 60, when)); h != nil || !slices.Equal(codes(d.Breaches), []string{"approval-missing"}) {
		t.Fatalf("Hold without the approval: %v %+v", h, d)
	}
	held, d := l.HoldForApproval(gbp(f, 60, when))
	if held == nil || d.Allowed || !slices.Equal(codes(d.Breaches), []string{"approval-missing"}) {
		t.Fatalf("HoldForApproval: %v %+v", held, d)
	}
	if l.Held() != 1 {
		t.Fatalf("%d held", l.Held())
	}
	// 60 held and 60 more pass the limit: refused for that too, not held.
	if h2, d := l.HoldForApproval(gbp(f, 60, when)); h2 != nil || !slices.Contains(codes(d.Breaches), "over-limit") {
		t.Fatalf("a second hold over the limit: %v %+v", h2, d)
	}
	// Reserved without the approval it is still refused, and stays held.
	if res, d := held.Reserve(gbp(f, 60, when)); res != nil || !slices.Equal(codes(d.Breaches), []string{"approval-missing"}) {
		t.Fatalf("reserved without the approval: %v %+v", res, d)
	}
	if l.Flying(f.slip.Fingerprint) != 0 {
		t.Fatal("a held call counts as flying")
	}
	held.Release()
	if l.Held() != 0 {
		t.Fatalf("%d held after the release", l.Held())
	}
}
