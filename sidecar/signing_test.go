package sidecar

import (
	"bytes"
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
)

// flakySigner is a real local key set whose first failures signatures fail, and which hangs (heeding
// no context) when hang is set: it stands in for a key store that hiccups or stops answering, which
// nothing real here can be made to do on cue.
type flakySigner struct {
	jwk.Signer
	failures int
	hang     chan struct{} // nil: no hang
	calls    atomic.Int32
}

func (f *flakySigner) Sign(ctx context.Context, alg string, in []byte) ([]byte, error) {
	n := f.calls.Add(1)
	if f.hang != nil {
		<-f.hang
		return nil, errors.New("released")
	}
	if int(n) <= f.failures {
		return nil, errors.New("transit: 503 service unavailable")
	}
	return f.Signer.Sign(ctx, alg, in)
}

func localSigner(t *testing.T) *jwk.LocalSigner {
	t.Helper()
	s, err := jwk.NewLocalSigner(bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestBoundedSignerRetriesAFailure(t *testing.T) {
	local := localSigner(t)
	want, err := local.Sign(context.Background(), "Ed25519", []byte("input"))
	if err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		f := &flakySigner{Signer: local, failures: 1}
		b := newBoundedSigner(f, "agent", time.Second, 3, nil)
		start := time.Now()
		got, err := b.Sign(context.Background(), "Ed25519", []byte("input"))
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("a signer that fails once: %v", err)
		}
		if f.calls.Load() != 2 || time.Since(start) != retryPause(1) {
			t.Fatalf("%d tries in %s; want 2 after one pause of %s", f.calls.Load(), time.Since(start), retryPause(1))
		}
	})
}

func TestBoundedSignerGivesUpAfterTries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &flakySigner{Signer: localSigner(t), failures: 100}
		b := newBoundedSigner(f, "executor", time.Second, 3, nil)
		_, err := b.Sign(context.Background(), "ML-DSA-87", []byte("input"))
		if err == nil || f.calls.Load() != 3 {
			t.Fatalf("a signer that always fails: %v after %d tries, want an error after 3", err, f.calls.Load())
		}
	})
}

// A signer that hangs, heeding no context, is cut at its deadline on every try.
func TestBoundedSignerCutsAHang(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &flakySigner{Signer: localSigner(t), hang: make(chan struct{})}
		defer close(f.hang)
		b := newBoundedSigner(f, "agent", 2*time.Second, 2, nil)
		start := time.Now()
		_, err := b.Sign(context.Background(), "Ed25519", []byte("input"))
		if !errors.Is(err, ErrSignTimeout) {
			t.Fatalf("a hanging signer: %v, want ErrSignTimeout", err)
		}
		if want := 2*2*time.Second + retryPause(1); time.Since(start) != want {
			t.Fatalf("cut after %s, want %s (two tries of 2s and one pause)", time.Since(start), want)
		}
	})
}

// A key set held in this process signs in the caller's goroutine, with no deadline to watch, and
// vouches for its signatures (record.SignChecked then trusts them); a signer wrapping it that does
// not say so is bounded and checked.
func TestBoundedSignerLocalKeys(t *testing.T) {
	local := localSigner(t)
	b := newBoundedSigner(local, "agent", time.Nanosecond, 1, nil)
	// A deadline of 1ns cuts any signature made in a goroutine of its own; a local one is not cut.
	for range 20 {
		if _, err := b.Sign(context.Background(), "ML-DSA-87", []byte("input")); err != nil {
			t.Fatalf("a local key set under a 1ns signTimeout: %v", err)
		}
	}
	if !b.SignaturesChecked() {
		t.Error("a local key set does not vouch for its signatures")
	}
	if newBoundedSigner(&flakySigner{Signer: local}, "agent", time.Second, 1, nil).SignaturesChecked() {
		t.Error("a signer wrapping the local keys vouches for its signatures")
	}
}

// TestBoundedSignerSignsInProcess: a bounded signer of a key set held here
// says it signs on this process's cores (its line's two records are then
// signed one after the other when every core is busy); one of a signer
// elsewhere (here a stand-in for Vault Transit) does not.
func TestBoundedSignerSignsInProcess(t *testing.T) {
	local := localSigner(t)
	if !newBoundedSigner(local, "agent", time.Second, 1, nil).SignsInProcess() {
		t.Error("a bounded local key set does not say it signs in this process")
	}
	if newBoundedSigner(&flakySigner{Signer: local}, "agent", time.Second, 1, nil).SignsInProcess() {
		t.Error("a bounded signer elsewhere says it signs in this process")
	}
}

// inputKeeper is a signer elsewhere that keeps the input it was given
// (as a signature cut at its deadline may go on reading it).
type inputKeeper struct {
	jwk.Signer
	kept []byte
}

func (k *inputKeeper) Sign(ctx context.Context, alg string, in []byte) ([]byte, error) {
	k.kept = in
	return k.Signer.Sign(ctx, alg, in)
}

// TestBoundedSignerAppendSign: a bounded local key set appends a signature
// that checks after what dst holds; a bounded signer elsewhere is tried as
// Sign tries it (a failure once, then the signature, appended) and is
// handed its own copy of the input, which the caller may then write over.
func TestBoundedSignerAppendSign(t *testing.T) {
	local := localSigner(t)
	input := []byte("input")
	for _, alg := range jwk.KeySetAlgs {
		out, err := newBoundedSigner(local, "agent", time.Second, 1, nil).AppendSign(context.Background(), alg, []byte("x"), input)
		if err != nil || out[0] != 'x' || !local.Keys().Key(alg).Verify(input, out[1:]) {
			t.Fatalf("%s: a bounded local key set: %v", alg, err)
		}
	}
	synctest.Test(t, func(t *testing.T) {
		f := &flakySigner{Signer: local, failures: 1}
		out, err := newBoundedSigner(f, "agent", time.Second, 2, nil).AppendSign(context.Background(), "Ed25519", []byte("x"), input)
		if err != nil || f.calls.Load() != 2 || out[0] != 'x' || !local.Keys().Key("Ed25519").Verify(input, out[1:]) {
			t.Fatalf("a signer elsewhere failing once: %v after %d tries", err, f.calls.Load())
		}
	})
	k := &inputKeeper{Signer: local}
	mine := []byte("input")
	if _, err := newBoundedSigner(k, "agent", time.Second, 1, nil).AppendSign(context.Background(), "Ed25519", nil, mine); err != nil {
		t.Fatal(err)
	}
	mine[0] = 'X'
	if string(k.kept) != "input" {
		t.Fatalf("the signer elsewhere was handed the caller's buffer: it now reads %q", k.kept)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := newBoundedSigner(local, "agent", time.Second, 1, nil).AppendSign(ctx, "Ed25519", nil, input); err == nil {
		t.Fatal("a bounded local key set signed with a cancelled context")
	}
}
