package receipt

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
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

	rec record.Prepared // the content confirmed and written; zero (and not signable) for a PreparedStub not made by Prepare
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

// Sign signs the prepared stub with the agent's keys and countersigns it
// with the executor's keys dated countersignedAt (the countersignature
// names only the stub's fingerprint, so the two can be signed at the same
// time): one book line, each record signed once with record.SignChecked
// and its canonical text built once, so that Book.AppendSigned does not
// check its signatures again (a signer that does not vouch for its own has
// each checked as it arrives; see record.CheckedSigner). Set Approval on
// the result for a held call.
//
// The countersignature is signed on a goroutine of its own, beside the
// stub's, unless both key sets sign in this process and more lines are
// being signed than there are cores to sign them: then every core is busy
// signing already, and the second goroutine would only cost its start, its
// stack's growth and a wake-up, so the two are signed one after the other.
func (p PreparedStub) Sign(ctx context.Context, agent, executor jwk.Signer, countersignedAt time.Time) (book.SignedStub, error) {
	n := linesSigning.Add(1)
	defer linesSigning.Add(-1)
	csContent := countersignatureContent(p.Fingerprint, countersignedAt)
	var cs record.Signed
	var csErr error
	var csDone chan struct{} // nil: signed after the stub, on this goroutine
	if signsBeside(n, agent, executor) {
		csDone = make(chan struct{})
		go func() {
			defer close(csDone)
			cs, csErr = record.SignChecked(ctx, record.Countersignature, csContent, executor)
		}()
	}
	stub, err := p.rec.Sign(ctx, agent) // fails for a PreparedStub Prepare did not make
	if csDone != nil {
		<-csDone
	} else if err == nil {
		cs, csErr = record.SignChecked(ctx, record.Countersignature, csContent, executor)
	}
	if err != nil {
		return book.SignedStub{}, fmt.Errorf("signing the stub: %w", err)
	}
	if stub.Fingerprint() != p.Fingerprint {
		return book.SignedStub{}, errors.New("signing the stub: the signed content is not the prepared one")
	}
	if csErr != nil {
		return book.SignedStub{}, fmt.Errorf("countersigning the stub: %w", csErr)
	}
	return book.SignedStub{Stub: stub, Countersignature: cs}, nil
}

// linesSigning counts the stub lines being signed (PreparedStub.Sign) in
// this process.
var linesSigning atomic.Int64

// signingCores is how many lines can be signed at once on this machine's
// cores; tests set it to sign one way or the other.
var signingCores = func() int { return runtime.GOMAXPROCS(0) }

// signsBeside reports whether the countersignature is signed on a
// goroutine of its own, beside the stub, when n lines are being signed.
func signsBeside(n int64, agent, executor jwk.Signer) bool {
	// A signer elsewhere (Vault Transit) costs no core here: two of its
	// signatures at once take half the time.
	return n <= int64(signingCores()) || !jwk.SignsInProcess(agent) || !jwk.SignsInProcess(executor)
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
