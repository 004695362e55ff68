package receipt

import (
	"context"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

func newSigner(t *testing.T) jwk.Signer {
	t.Helper()
	s, err := jwk.NewLocalSigner(jwk.NewSeeds())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestStubSign: the stub and its countersignature are valid records, signed by the agent's and the
// executor's keys; previous is written only after the first stub; amount and details as given.
func TestStubSign(t *testing.T) {
	agent, exec := newSigner(t), newSigner(t)
	when := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	slipFP, prev := canon.Fingerprint([]byte("slip")), canon.Fingerprint([]byte("previous"))
	for _, tc := range []struct {
		name     string
		f        StubFields
		previous bool
	}{
		{"first, no amount", StubFields{Slip: slipFP, Action: "a.b", With: "executor", When: when,
			Details: []record.Detail{record.TextDetail(LabelCall, "c1")}}, false},
		{"later, with amount", StubFields{Slip: slipFP, Seq: 3, Previous: prev, Action: "a.b", With: "executor", When: when,
			Amount: &record.Amount{Unit: "GBP", Value: 12}, Details: []record.Detail{record.TextDetail(LabelCall, "c2"), WrittenLate()}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line, err := tc.f.Sign(context.Background(), agent, exec, when.Add(time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if err := record.VerifyHybrid(line.Stub, agent.Keys()); err != nil {
				t.Errorf("stub: %v", err)
			}
			if err := record.VerifyHybrid(line.Countersignature, exec.Keys()); err != nil {
				t.Errorf("countersignature: %v", err)
			}
			if err := record.ValidateStub(line.Stub.Content); err != nil {
				t.Errorf("stub content: %v", err)
			}
			if err := record.ValidateCountersignature(line.Countersignature.Content); err != nil {
				t.Errorf("countersignature content: %v", err)
			}
			c := line.Stub.Content
			if _, has := c["previous"]; has != tc.previous || (has && c["previous"] != prev) {
				t.Errorf("previous: %v", c["previous"])
			}
			if c["when"] != "2026-03-01T10:00:00Z" || c["seq"] != tc.f.Seq || c["slip"] != slipFP {
				t.Errorf("content: %v", c)
			}
			if _, has := c["amount"]; has != (tc.f.Amount != nil) {
				t.Errorf("amount: %v", c["amount"])
			}
			if got := c["details"].([]any); len(got) != len(tc.f.Details) {
				t.Errorf("details: %v", got)
			}
			if line.Countersignature.Content["stub"] != line.Stub.Fingerprint || line.Countersignature.Content["when"] != "2026-03-01T10:00:01Z" {
				t.Errorf("countersignature: %v", line.Countersignature.Content)
			}
		})
	}
}

// TestDenialSign: a denial is a valid refusal signed by the executor's keys, by naming them.
func TestDenialSign(t *testing.T) {
	exec := newSigner(t)
	f := DenialFields{Slip: canon.Fingerprint([]byte("slip")), Action: "executor.unlisted", Reason: "other", By: "test executor",
		Amount: &record.Amount{Unit: "GBP", Value: 1}, When: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}
	line, err := f.Sign(context.Background(), exec)
	if err != nil {
		t.Fatal(err)
	}
	if err := record.ValidateRefusal(line.Refusal.Content); err != nil {
		t.Fatal(err)
	}
	if err := record.VerifyHybrid(line.Refusal, exec.Keys()); err != nil {
		t.Fatal(err)
	}
	by := line.Refusal.Content["by"].(map[string]any)
	if by["name"] != "test executor" || line.Refusal.Content["reason"] != "other" {
		t.Errorf("content: %v", line.Refusal.Content)
	}
	if line.Stub != nil || line.Countersignature != nil {
		t.Errorf("a denial line holds a refusal only")
	}
}

func TestRulesSoftwareName(t *testing.T) {
	if got := RulesSoftwareName("shop"); got != "Content rules of shop" {
		t.Errorf("%q", got)
	}
}
