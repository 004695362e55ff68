package receipt

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// PreparedStub is a stub's content fixed (its id drawn) before it is
// signed. Its fingerprint is the fingerprint of the content alone, so the
// next stub of the chain (whose previous it is) can be prepared, and both
// signed at the same time, before this one is signed.
//
// Prepare writes the content's canonical text once, and Sign signs that
// text: Content is for reading only.
type PreparedStub struct {
	Content     map[string]any
	Fingerprint string // canon.Fingerprint of the content's canonical bytes

	rec record.Prepared // the content confirmed and written; zero for a PreparedStub not made by Prepare
}

// Prepare fixes the stub's content with a new id.
func (f StubFields) Prepare() (PreparedStub, error) {
	c := f.Content()
	rec, err := record.Prepare(record.Stub, c)
	if err != nil {
		return PreparedStub{}, fmt.Errorf("preparing the stub: %w", err)
	}
	return PreparedStub{Content: c, Fingerprint: rec.Fingerprint(), rec: rec}, nil
}

// Sign signs the prepared stub with the agent's keys and, at the same time
// (the countersignature names only the stub's fingerprint), countersigns it
// with the executor's keys dated countersignedAt: one book line, each
// record signed once with record.SignChecked and its canonical text built
// once, so that Book.AppendSigned does not check its signatures again (a
// signer that does not vouch for its own has each checked as it arrives;
// see record.CheckedSigner). Set Approval on the result for a held call.
func (p PreparedStub) Sign(ctx context.Context, agent, executor jwk.Signer, countersignedAt time.Time) (book.SignedStub, error) {
	type result struct {
		rec record.Signed
		err error
	}
	csDone := make(chan result, 1)
	go func() {
		cs, err := record.SignChecked(ctx, record.Countersignature, countersignatureContent(p.Fingerprint, countersignedAt), executor)
		csDone <- result{cs, err}
	}()
	var stub record.Signed
	var err error
	if p.rec.IsZero() {
		stub, err = record.SignChecked(ctx, record.Stub, p.Content, agent)
	} else {
		stub, err = p.rec.Sign(ctx, agent)
	}
	cs := <-csDone
	if err != nil {
		return book.SignedStub{}, fmt.Errorf("signing the stub: %w", err)
	}
	if stub.Fingerprint() != p.Fingerprint {
		return book.SignedStub{}, errors.New("signing the stub: the signed content is not the prepared one")
	}
	if cs.err != nil {
		return book.SignedStub{}, fmt.Errorf("countersigning the stub: %w", cs.err)
	}
	return book.SignedStub{Stub: stub, Countersignature: cs.rec}, nil
}

// countersignatureContent is the content of the executor's countersignature
// of the stub with fingerprint stub.
func countersignatureContent(stub string, at time.Time) map[string]any {
	return map[string]any{
		"type": "provared.countersignature.v0",
		"stub": stub,
		"when": canon.FormatTime(at),
	}
}
