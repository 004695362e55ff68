package book

import (
	"math/rand/v2"
	"sort"
	"testing"
)

func TestWindowStart(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		n := rng.IntN(40)
		items := make([]periodItem, n)
		w := int64(0)
		for i := range items {
			w += int64(rng.IntN(3))
			items[i].when = w
		}
		cutoff := int64(rng.IntN(int(w) + 3))
		want := sort.Search(n, func(k int) bool { return items[k].when > cutoff })
		if got := windowStart(items, cutoff); got != want {
			t.Fatalf("windowStart(%v, %d) = %d, want %d", items, cutoff, got, want)
		}
	}
}

func TestDecisionReason(t *testing.T) {
	for codes, want := range map[string]string{
		"b:action-not-allowed":       "not-in-slip",
		"b:countersignature-missing": "not-in-slip",
		"b:over-period-limit":        "over-limit",
		"b:amount-missing":           "over-limit",
		"b:outside-valid-time":       "outside-valid-time",
		"b:approval-missing":         "needs-approval",
		"p:record-not-sound":         "slip-not-sound",
		"p:slip-missing":             "slip-not-sound",
	} {
		var d Decision
		if codes[0] == 'b' {
			d.Breaches = []Finding{{Code: codes[2:]}}
		} else {
			d.Problems = []Finding{{Code: codes[2:]}}
		}
		if got := d.Reason(); got != want {
			t.Errorf("%s: reason %s, want %s", codes, got, want)
		}
	}
}
