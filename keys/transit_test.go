package keys

import (
	"testing"

	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// TestTransitSignerVouches: a Transit key set checks each signature as it
// arrives (its Sign), so record.SignChecked takes them as checked and does
// not check them again; the check itself runs against a real Vault in
// TestTransitKeySet (integration tag).
func TestTransitSignerVouches(t *testing.T) {
	var s record.CheckedSigner = &TransitSigner{}
	if !record.SignaturesChecked(s) {
		t.Fatal("a Transit key set does not vouch for its signatures")
	}
}
