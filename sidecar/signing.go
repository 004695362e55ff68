package sidecar

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/sidecar/telemetry"
)

// boundedSigner gives every signature of a key set a deadline and a bounded
// number of tries: a signer that fails once (a Vault Transit hiccup) is tried
// again and the call goes on; one that hangs is cut at its deadline, so that
// no signature holds the scribe (which every session shares) for longer
// than tries × timeout.
type boundedSigner struct {
	inner   jwk.Signer
	name    string // "agent" or "executor", for the log
	timeout time.Duration
	tries   int
	log     *slog.Logger
	tel     *telemetry.Telemetry // nil: not observed
}

// observed makes b record its signatures' times and errors in t.
func (b *boundedSigner) observed(t *telemetry.Telemetry) *boundedSigner {
	b.tel = t
	return b
}

// retryPause is the pause before the n-th retry (n from 1): 100 ms, 200 ms, …
func retryPause(n int) time.Duration { return time.Duration(n) * 100 * time.Millisecond }

func newBoundedSigner(inner jwk.Signer, name string, timeout time.Duration, tries int, log *slog.Logger) *boundedSigner {
	if tries < 1 {
		tries = 1
	}
	return &boundedSigner{inner: inner, name: name, timeout: timeout, tries: tries, log: orDiscard(log)}
}

func (b *boundedSigner) Keys() jwk.KeySet { return b.inner.Keys() }

// SignaturesChecked reports whether b vouches for its signatures: it hands
// on its inner signer's signatures unchanged, so it vouches for them when
// that signer does (record.CheckedSigner).
func (b *boundedSigner) SignaturesChecked() bool { return record.SignaturesChecked(b.inner) }

// SignsInProcess reports whether b signs on this process's cores (see
// inProcess). receipt.PreparedStub.Sign then signs a line's two records
// one after the other when every core is busy signing.
func (b *boundedSigner) SignsInProcess() bool {
	_, ok := b.inProcess()
	return ok
}

// inProcess is b's inner signer when it is a key set held in this process
// (it says so, as jwk.LocalSigner does) that appends its signatures: it
// signs in the caller's goroutine and neither waits on anything nor fails
// for a while, so it needs no deadline and no tries, and the call path
// saves a hand-off per signature.
func (b *boundedSigner) inProcess() (jwk.AppendSigner, bool) {
	s, ok := b.inner.(jwk.AppendSigner)
	if !ok || !jwk.SignsInProcess(b.inner) {
		return nil, false
	}
	return s, true
}

// ErrSignTimeout is the error of a signature that ran out of its time.
var ErrSignTimeout = errors.New("the signature ran out of time (signTimeout)")

// Sign tries the inner signer up to tries times, each under its timeout.
func (b *boundedSigner) Sign(ctx context.Context, alg string, input []byte) (sig []byte, err error) {
	start := time.Now()
	defer func() { b.tel.Signed(ctx, b.name, start, err) }()
	var last error
	for try := 1; try <= b.tries; try++ {
		if try > 1 {
			b.log.Warn("a signature failed; trying again", slog.String("keys", b.name), slog.String("alg", alg),
				slog.Int("try", try), slog.String("error", last.Error()))
			t := time.NewTimer(retryPause(try - 1))
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return nil, fmt.Errorf("signing with the %s keys (%s): %w (after: %w)", b.name, alg, ctx.Err(), last)
			}
		}
		sig, err := b.once(ctx, alg, input)
		if err == nil {
			return sig, nil
		}
		last = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("signing with the %s keys (%s) failed %d times (signTries); last: %w", b.name, alg, b.tries, last)
}

// AppendSign is Sign appending the signature to dst (jwk.AppendSigner),
// so that a record is signed into buffers used again. A key set held here
// (inProcess) signs straight into dst, in the caller's goroutine, observed
// as Sign's signatures are; any other signer signs through Sign, over its
// own copy of the input (a signature cut at its deadline may still be
// reading it).
func (b *boundedSigner) AppendSign(ctx context.Context, alg string, dst, input []byte) (out []byte, err error) {
	local, ok := b.inProcess()
	if !ok {
		sig, err := b.Sign(ctx, alg, slices.Clone(input))
		if err != nil {
			return nil, err
		}
		return append(dst, sig...), nil
	}
	start := time.Now()
	defer func() { b.tel.Signed(ctx, b.name, start, err) }()
	out, err = local.AppendSign(ctx, alg, dst, input)
	if err != nil {
		return nil, fmt.Errorf("signing with the %s keys (%s): %w", b.name, alg, err)
	}
	return out, nil
}

// once runs one signature under the timeout. A signer that does not heed
// its context is left to finish in its goroutine; its result is dropped. A
// key set held in this process (inProcess) signs in the caller's
// goroutine, without a deadline.
func (b *boundedSigner) once(ctx context.Context, alg string, input []byte) ([]byte, error) {
	if local, ok := b.inProcess(); ok {
		return local.AppendSign(ctx, alg, nil, input)
	}
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	type result struct {
		sig []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		sig, err := b.inner.Sign(ctx, alg, input)
		done <- result{sig, err}
	}()
	select {
	case r := <-done:
		if r.err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("%w: %w", ErrSignTimeout, r.err)
		}
		return r.sig, r.err
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, ErrSignTimeout
		}
		return nil, ctx.Err()
	}
}

var (
	_ record.CheckedSigner = (*boundedSigner)(nil)
	_ jwk.AppendSigner     = (*boundedSigner)(nil)
)
