package receipt

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

func lineFields() StubFields {
	return StubFields{Slip: canon.Fingerprint([]byte("slip")), Seq: 2, Previous: canon.Fingerprint([]byte("previous")),
		Action: "a.b", With: "executor", When: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC),
		Amount: &record.Amount{Unit: "GBP", Value: 12}, Details: []record.Detail{record.TextDetail(LabelCall, "c1")}}
}

// TestSignLine: the line built once from the signed envelopes is the
// canonical text of the same records, and its signatures check.
func TestSignLine(t *testing.T) {
	agent, exec := newSigner(t), newSigner(t)
	f := lineFields()
	s, err := f.SignLine(context.Background(), agent, exec, f.When.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	want, err := s.Line().Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("built once:\n%s\nmarshalled:\n%s", got, want)
	}
	line := s.Line()
	if err := record.VerifyHybrid(line.Stub, agent.Keys()); err != nil {
		t.Fatal(err)
	}
	if err := record.VerifyHybrid(line.Countersignature, exec.Keys()); err != nil {
		t.Fatal(err)
	}
	if s.Fingerprint() != line.Stub.Fingerprint || line.Countersignature.Content["stub"] != s.Fingerprint() {
		t.Fatalf("fingerprints: %s, %v", s.Fingerprint(), line.Countersignature.Content)
	}
}

// benchSigners are the agent's and the executor's key sets of a benchmark,
// held in this process.
func benchSigners(b *testing.B) (agent, exec *jwk.LocalSigner) {
	b.Helper()
	var err error
	if agent, err = jwk.NewLocalSigner(jwk.NewSeeds()); err != nil {
		b.Fatal(err)
	}
	if exec, err = jwk.NewLocalSigner(jwk.NewSeeds()); err != nil {
		b.Fatal(err)
	}
	return agent, exec
}

// BenchmarkStubLine: one call's stub line, signed and written out, the way
// it was (Sign, then the whole line marshalled: "marshalled") and built
// once (SignLine, the envelopes put together: "built-once"), beside its
// floor, the four signatures alone. The three run in turn in every round,
// so the machine's noise falls on each alike; each is reported as a ratio
// to the floor of the same run (x-floor).
func BenchmarkStubLine(b *testing.B) {
	agent, exec := benchSigners(b)
	ctx := context.Background()
	f := lineFields()
	at := f.When.Add(time.Second)
	input := []byte(canon.B64(canon.MustMarshal(f.Content())))
	var floor, marshalled, once time.Duration
	for b.Loop() {
		t0 := time.Now()
		for _, s := range []jwk.Signer{agent, exec} {
			for _, alg := range jwk.KeySetAlgs {
				if _, err := s.Sign(ctx, alg, input); err != nil {
					b.Fatal(err)
				}
			}
		}
		t1 := time.Now()
		line, err := f.Sign(ctx, agent, exec, at)
		if err == nil {
			_, err = line.Bytes()
		}
		t2 := time.Now()
		if err != nil {
			b.Fatal(err)
		}
		signed, err := f.SignLine(ctx, agent, exec, at)
		if err == nil {
			_, err = signed.Bytes()
		}
		t3 := time.Now()
		if err != nil {
			b.Fatal(err)
		}
		floor, marshalled, once = floor+t1.Sub(t0), marshalled+t2.Sub(t1), once+t3.Sub(t2)
	}
	b.ReportMetric(float64(floor.Nanoseconds())/float64(b.N), "floor-ns/op")
	b.ReportMetric(float64(marshalled)/float64(floor), "marshalled-x-floor")
	b.ReportMetric(float64(once)/float64(floor), "built-once-x-floor")
}

// BenchmarkStubLineAllocs: one call's stub line as the scribe makes it
// (Prepare, Sign, Bytes), with its allocations per line.
func BenchmarkStubLineAllocs(b *testing.B) {
	agent, exec := benchSigners(b)
	ctx := context.Background()
	f := lineFields()
	at := f.When.Add(time.Second)
	b.ReportAllocs()
	for b.Loop() {
		p, err := f.Prepare()
		if err != nil {
			b.Fatal(err)
		}
		s, err := p.Sign(ctx, agent, exec, at)
		if err == nil {
			_, err = s.Bytes()
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}
