package sidecar

import (
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// TestBoundedSignerVouchesAsItsInnerSigner: the bounded signer vouches for
// its signatures exactly when the signer it wraps does, so a local key
// set's are not checked again and a wrapper that says nothing (like the
// fault-injecting one) has each checked (record.SignChecked).
func TestBoundedSignerVouchesAsItsInnerSigner(t *testing.T) {
	local := localSigner(t)
	if !record.SignaturesChecked(newBoundedSigner(local, "agent", time.Second, 1, nil)) {
		t.Error("a bounded local key set does not vouch for its signatures")
	}
	if record.SignaturesChecked(newBoundedSigner(&flakySigner{Signer: local}, "agent", time.Second, 1, nil)) {
		t.Error("a bounded signer vouches for a wrapper that says nothing of its signatures")
	}
}
