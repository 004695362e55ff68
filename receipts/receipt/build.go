package receipt

import (
	"context"
	"fmt"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// StubFields are the contents of one call's stub, before signing.
type StubFields struct {
	Slip     string // the slip's fingerprint
	Seq      int64  // the stub's place in the slip's chain
	Previous string // the stub before it; not written at Seq 0
	Action   string
	Amount   *record.Amount // nil: none
	With     string         // the executor's service id
	Details  []record.Detail
	When     time.Time // whole seconds: the time the check before acting checked
	Approval string    // the fingerprint of the person's approval on the stub's line; "" for none
}

// Content is the stub's content, with a new id.
func (f StubFields) Content() map[string]any {
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
		c["amount"] = f.Amount.Canonical()
	}
	if len(f.Details) > 0 {
		c["details"] = record.DetailsValue(f.Details)
	}
	if f.Approval != "" {
		c["approval"] = f.Approval
	}
	return c
}

// Sign signs the stub with the agent's keys and countersigns it with the
// executor's keys (dated countersignedAt): one book line, as records.
func (f StubFields) Sign(ctx context.Context, agent, executor jwk.Signer, countersignedAt time.Time) (book.Line, error) {
	s, err := f.SignLine(ctx, agent, executor, countersignedAt)
	if err != nil {
		return book.Line{}, err
	}
	return s.Line(), nil
}

// SignLine is Sign giving the line as the book's SignedStub: the stub
// prepared and signed as [PreparedStub.Sign] signs it. Set Approval on the
// result for a held call.
func (f StubFields) SignLine(ctx context.Context, agent, executor jwk.Signer, countersignedAt time.Time) (book.SignedStub, error) {
	p, err := f.Prepare()
	if err != nil {
		return book.SignedStub{}, err
	}
	return p.Sign(ctx, agent, executor, countersignedAt)
}

// DenialFields are the contents of a refusal the executor signs.
type DenialFields struct {
	Slip   string // the slip's fingerprint
	Action string
	Amount *record.Amount // nil: none
	Reason string         // one of record.RefusalReasons
	By     string         // the executor's name
	When   time.Time
}

// Content is the refusal's content, with a new id; by holds the keys of
// executor.
func (f DenialFields) Content(executor jwk.KeySet) map[string]any {
	c := map[string]any{
		"type":   "provared.refusal.v0",
		"id":     canon.NewID(),
		"slip":   f.Slip,
		"action": f.Action,
		"reason": f.Reason,
		"by":     map[string]any{"keys": executor.Value(), "name": f.By},
		"when":   canon.FormatTime(f.When),
	}
	if f.Amount != nil {
		c["amount"] = f.Amount.Canonical()
	}
	return c
}

// Sign signs the refusal with the executor's keys: one book line.
func (f DenialFields) Sign(ctx context.Context, executor jwk.Signer) (book.Line, error) {
	rec, err := record.Sign(ctx, record.Kind("refusal"), f.Content(executor.Keys()), executor)
	if err != nil {
		return book.Line{}, fmt.Errorf("signing the denial: %w", err)
	}
	return book.Line{Refusal: rec}, nil
}
