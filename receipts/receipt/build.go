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
	// Pass is, for a helper agent's call, the fingerprint of the pass it
	// acts under; "" for the slip's own agent. Such a stub is signed with
	// the helper's keys (the pass's to.keys: the agent signer handed to
	// Sign is the helper's), and Seq and Previous are its place in the
	// pass's own chain (§7, §25), as the reservation's Position gives it.
	Pass string
}

// At is f with what the ledger decided for the call filled in: its slip,
// its pass (a helper's call), the time it was checked at, and its place
// in its chain (pos, from res.Position).
func (f StubFields) At(res *book.Reservation, pos book.Position) StubFields {
	f.Slip, f.Pass, f.When = res.Slip(), res.Pass(), res.When()
	f.Seq, f.Previous = pos.Seq, pos.Previous
	return f
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
	if f.Pass != "" {
		c["pass"] = f.Pass
	}
	return c
}

// Sign signs the stub with the agent's keys (for a helper's call under a
// pass, the helper's) and countersigns it with the executor's keys (dated
// countersignedAt): one book line, as records.
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
