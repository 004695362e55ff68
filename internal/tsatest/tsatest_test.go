package tsatest

import (
	"bytes"
	"crypto/sha256"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/stamp"
)

// A made-up service's token is read as sound by the format's check, at
// the time it was made for.
func TestTokenChecks(t *testing.T) {
	s, err := New(bytes.Repeat([]byte{5}, 32))
	if err != nil {
		t.Fatal(err)
	}
	stamped := sha256.Sum256([]byte("a seal"))
	at := time.Date(2026, 11, 1, 9, 30, 0, 0, time.UTC)
	res, err := stamp.Check(s.Token(stamped[:], at, Options{Nonce: []byte{1, 2}}), stamped[:], stamp.Options{Trusted: []string{s.Fingerprint}})
	if err != nil {
		t.Fatal(err)
	}
	if res.State != stamp.StateValid || res.When != "2026-11-01T09:30:00Z" || res.Authority != s.Fingerprint {
		t.Fatalf("%+v", res)
	}
	if _, err := stamp.Check(s.Token(stamped[:], at, Options{AccuracySeconds: 301}), stamped[:], stamp.Options{}); err == nil {
		t.Fatal("a token stating its time to 301 s accepted")
	}
}
