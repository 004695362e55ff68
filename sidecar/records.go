package sidecar

import (
	"context"
	"fmt"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// stubFields are the contents of one call's stub, before signing.
type stubFields struct {
	Slip     string
	Seq      int64
	Previous string
	Action   string
	Amount   *amount
	With     string
	Details  []detail
	When     time.Time
}

func (f stubFields) content() map[string]any {
	c := map[string]any{
		"type":   "provared.stub.v0",
		"id":     canon.NewID(),
		"slip":   f.Slip,
		"seq":    f.Seq,
		"action": f.Action,
		"with":   f.With,
		"when":   canon.FormatTime(f.When),
	}
	if f.Seq > 0 {
		c["previous"] = f.Previous
	}
	if f.Amount != nil {
		c["amount"] = map[string]any{"unit": f.Amount.Unit, "value": f.Amount.Value}
	}
	if len(f.Details) > 0 {
		list := make([]any, len(f.Details))
		for i, d := range f.Details {
			list[i] = map[string]any{"name": d.Name, "sha256": d.SHA256}
		}
		c["details"] = list
	}
	return c
}

// signStub signs a stub with the agent's keys and countersigns it with the
// executor's keys (dated countersignedAt): one book line.
func signStub(ctx context.Context, f stubFields, agent, executor jwk.Signer, countersignedAt time.Time) (book.Line, error) {
	stub, err := record.Sign(ctx, record.Kind("stub"), f.content(), agent)
	if err != nil {
		return book.Line{}, fmt.Errorf("signing the stub: %w", err)
	}
	cs, err := record.Sign(ctx, record.Kind("countersignature"), map[string]any{
		"type": "provared.countersignature.v0",
		"stub": stub.Fingerprint,
		"when": canon.FormatTime(countersignedAt),
	}, executor)
	if err != nil {
		return book.Line{}, fmt.Errorf("countersigning the stub: %w", err)
	}
	return book.Line{Stub: stub, Countersignature: cs}, nil
}

// denialFields are the contents of a refusal the executor signs.
type denialFields struct {
	Slip   string
	Action string
	Amount *amount
	Reason string
	By     string // the executor's name
	When   time.Time
}

// signDenial signs a refusal with the executor's keys: one book line.
func signDenial(ctx context.Context, f denialFields, executor jwk.Signer) (book.Line, error) {
	c := map[string]any{
		"type":   "provared.refusal.v0",
		"id":     canon.NewID(),
		"slip":   f.Slip,
		"action": f.Action,
		"reason": f.Reason,
		"by":     map[string]any{"keys": executor.Keys().Value(), "name": f.By},
		"when":   canon.FormatTime(f.When),
	}
	if f.Amount != nil {
		c["amount"] = map[string]any{"unit": f.Amount.Unit, "value": f.Amount.Value}
	}
	rec, err := record.Sign(ctx, record.Kind("refusal"), c, executor)
	if err != nil {
		return book.Line{}, fmt.Errorf("signing the denial: %w", err)
	}
	return book.Line{Refusal: rec}, nil
}
