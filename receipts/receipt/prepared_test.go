package receipt

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// TestPreparedStub: a prepared stub's fingerprint is the signed stub's, so the next stub can name it as
// previous before it is signed; the line is the one StubFields.Sign makes (both records check, the
// countersignature names the stub and its time).
func TestPreparedStub(t *testing.T) { bothWays(t, testPreparedStub) }

func testPreparedStub(t *testing.T) {
	agent, exec := newSigner(t), newSigner(t)
	when := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	f := StubFields{Slip: canon.Fingerprint([]byte("slip")), Action: "a.b", With: "executor", When: when,
		Details: []record.Detail{record.TextDetail(LabelCall, "c1")}}
	first, err := f.Prepare()
	if err != nil {
		t.Fatal(err)
	}
	f.Seq, f.Previous = 1, first.Fingerprint
	second, err := f.Prepare()
	if err != nil {
		t.Fatal(err)
	}
	if second.Content["previous"] != first.Fingerprint || first.Content["id"] == second.Content["id"] {
		t.Fatalf("second content: %v", second.Content)
	}
	for _, p := range []PreparedStub{second, first} { // signed in either order
		signed, err := p.Sign(context.Background(), agent, exec, when.Add(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if signed.Fingerprint() != p.Fingerprint {
			t.Errorf("stub fingerprint %s, prepared %s", signed.Fingerprint(), p.Fingerprint)
		}
		if b1, err := signed.Bytes(); err != nil {
			t.Fatal(err)
		} else if b2, err := signed.Line().Bytes(); err != nil || string(b1) != string(b2) {
			t.Errorf("the signed line's bytes differ from its records' (%v)", err)
		}
		line := signed.Line()
		if err := record.VerifyHybrid(line.Stub, agent.Keys()); err != nil {
			t.Errorf("stub: %v", err)
		}
		if err := record.VerifyHybrid(line.Countersignature, exec.Keys()); err != nil {
			t.Errorf("countersignature: %v", err)
		}
		if err := record.ValidateCountersignature(line.Countersignature.Content); err != nil {
			t.Errorf("countersignature content: %v", err)
		}
		if line.Countersignature.Content["stub"] != p.Fingerprint || line.Countersignature.Content["when"] != "2026-03-01T10:00:01Z" {
			t.Errorf("countersignature: %v", line.Countersignature.Content)
		}
	}
}

type failingSigner struct{ jwk.Signer }

func (failingSigner) Sign(context.Context, string, []byte) ([]byte, error) {
	return nil, errors.New("no signature today")
}

// TestPreparedStubSignFails: a failure of either signer is the error, naming which record.
func TestPreparedStubSignFails(t *testing.T) { bothWays(t, testPreparedStubSignFails) }

func testPreparedStubSignFails(t *testing.T) {
	agent, exec := newSigner(t), newSigner(t)
	p, err := StubFields{Slip: canon.Fingerprint([]byte("slip")), Action: "a.b", With: "executor", When: time.Unix(0, 0)}.Prepare()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name        string
		agent, exec jwk.Signer
		want        string
	}{
		{"stub", failingSigner{agent}, exec, "signing the stub"},
		{"countersignature", agent, failingSigner{exec}, "countersigning the stub"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := p.Sign(context.Background(), tc.agent, tc.exec, time.Unix(1, 0))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one naming %q", err, tc.want)
			}
		})
	}
}

// bothWays runs test with the countersignature signed beside the stub and
// after it (as when every core is busy signing).
func bothWays(t *testing.T, test func(t *testing.T)) {
	for _, c := range []struct {
		name  string
		cores int
	}{{"beside", 1 << 20}, {"after", 0}} {
		t.Run(c.name, func(t *testing.T) {
			was := signingCores
			signingCores = func() int { return c.cores }
			t.Cleanup(func() { signingCores = was })
			if got := signsBeside(1, newSigner(t), newSigner(t)); got != (c.cores > 0) {
				t.Fatalf("signsBeside: %v with %d cores", got, c.cores)
			}
			test(t)
		})
	}
}

// inProcess says it signs in this process, as the sidecar's bounded
// signer of a local key set does.
type inProcess struct {
	jwk.Signer
	here bool
}

func (s inProcess) SignsInProcess() bool { return s.here }

// TestSignsBeside: the countersignature goes on a goroutine of its own
// while there are cores for it, or when either key set signs elsewhere
// (its signature costs no core here); after the stub otherwise.
func TestSignsBeside(t *testing.T) {
	local := newSigner(t)
	cores := int64(signingCores())
	for _, c := range []struct {
		name        string
		n           int64
		agent, exec jwk.Signer
		want        bool
	}{
		{"cores free", 1, local, local, true},
		{"as many lines as cores", cores, local, local, true},
		{"cores busy", cores + 1, local, local, false},
		{"cores busy, wrapped local", cores + 1, inProcess{local, true}, inProcess{local, true}, false},
		{"cores busy, executor elsewhere", cores + 1, local, inProcess{local, false}, true},
		{"cores busy, agent elsewhere", cores + 1, failingSigner{local}, local, true},
		{"nil local signer", cores + 1, (*jwk.LocalSigner)(nil), local, true},
	} {
		if got := signsBeside(c.n, c.agent, c.exec); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestPreparedStubOnlyFromPrepare: a PreparedStub that Prepare did not
// make, or whose fingerprint was changed after it, is refused, not signed.
func TestPreparedStubOnlyFromPrepare(t *testing.T) {
	agent, exec := newSigner(t), newSigner(t)
	f := StubFields{Slip: canon.Fingerprint([]byte("slip")), Action: "a.b", With: "executor",
		When: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC), Details: []record.Detail{record.TextDetail(LabelCall, "c1")}}
	p, err := f.Prepare()
	if err != nil {
		t.Fatal(err)
	}
	literal := PreparedStub{Content: p.Content, Fingerprint: p.Fingerprint}
	if _, err := literal.Sign(context.Background(), agent, exec, time.Now()); err == nil || !strings.Contains(err.Error(), "not prepared") {
		t.Errorf("a PreparedStub not made by Prepare: %v", err)
	}
	changed := p
	changed.Fingerprint = canon.Fingerprint([]byte("other"))
	if _, err := changed.Sign(context.Background(), agent, exec, time.Now()); err == nil || !strings.Contains(err.Error(), "not the prepared one") {
		t.Errorf("a prepared stub whose fingerprint changed: %v", err)
	}
}
