package book

import (
	"bytes"
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// signedLine signs the line of a proposal at pos as the engine does
// (record.SignChecked), the stub by agent and the countersignature by exec.
func (f *fixture) signedLine(t testing.TB, pos Position, p Proposal, agent, exec jwk.Signer) SignedStub {
	t.Helper()
	stub, err := record.SignChecked(context.Background(), record.Stub, f.stubContent(pos, p, ""), agent)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := record.SignChecked(context.Background(), record.Countersignature, map[string]any{
		"type": "provared.countersignature.v0", "stub": stub.Fingerprint(), "when": canon.FormatTime(p.When),
	}, exec)
	if err != nil {
		t.Fatal(err)
	}
	return SignedStub{Stub: stub, Countersignature: cs}
}

// countChecks counts the signatures the book checks.
func countChecks(t *testing.T) *atomic.Int64 {
	n := new(atomic.Int64)
	was := checkSignature
	checkSignature = func(k *jwk.Key, input, sig []byte) bool { n.Add(1); return was(k, input, sig) }
	t.Cleanup(func() { checkSignature = was })
	return n
}

// TestAppendSigned: a line signed here is written as the text the same
// records marshal to, no signature is checked on the way in, the ledger
// counts it, and the book read again from the start is intact.
func TestAppendSigned(t *testing.T) {
	f := newFixture(t, map[string]any{"requires": []any{map[string]any{"need": "countersignature"}}})
	b, path := openEmpty(t, f)
	if err := b.Append(f.slipLine()); err != nil {
		t.Fatal(err)
	}
	checks := countChecks(t)
	var written [][]byte
	for i := range 3 {
		p := Proposal{Slip: f.slip.Fingerprint, Action: "tool.a", With: "executor", When: f.start.Add(time.Duration(i) * time.Second)}
		res, d := b.Ledger().Reserve(p)
		if res == nil {
			t.Fatalf("not reserved: %+v", d)
		}
		pos, err := res.Position(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		s := f.signedLine(t, pos, p, f.agent, f.exec)
		if err := b.AppendSigned(res, s); err != nil {
			t.Fatal(err)
		}
		text, err := s.Line().Bytes()
		if err != nil {
			t.Fatal(err)
		}
		if n, err := s.Len(); err != nil || n != len(text) {
			t.Fatalf("Len %d, %v: the line is %d bytes", n, err, len(text))
		}
		exactLine(t, s, text)
		written = append(written, text)
	}
	if checks.Load() != 0 {
		t.Fatalf("%d signatures were checked again on the way in", checks.Load())
	}
	if c := b.Ledger().Counts(); c.Stubs != 3 || c.Countersigned != 3 {
		t.Fatalf("counts %+v", c)
	}
	text := readFile(t, path)
	lines := strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")
	for i, w := range written {
		if !bytes.Equal([]byte(lines[i+1]), w) {
			t.Fatalf("line %d is not the records' canonical text", i+2)
		}
	}
	res := CheckBook(text, f.opts)
	if !res.Summary.Intact || !res.Summary.WithinSlips || checks.Load() != 12 {
		t.Fatalf("read again: %+v, %d signatures checked", res.Summary, checks.Load())
	}
	cp, ok := b.Checkpoint()
	if !ok || cp.Entries != 4 {
		t.Fatalf("checkpoint %+v %v", cp, ok)
	}
	if root := res.Root; root != cp.Root {
		t.Fatalf("the ledger's top fingerprint %s is not the book's %s", cp.Root, root)
	}
}

// TestAppendSignedRefuses: what the checker would refuse is refused on
// this path too: keys that are not the slip's (the agent's or the
// service's), a place in the chain that is not the reservation's, a record
// not made by SignChecked, and a reservation that is not this book's or
// not its turn. A refused line leaves the book as it was.
func TestAppendSignedRefuses(t *testing.T) {
	f := newFixture(t, nil)
	other, err := jwk.NewLocalSigner(seeds(40))
	if err != nil {
		t.Fatal(err)
	}
	b, path := openEmpty(t, f)
	if err := b.Append(f.slipLine()); err != nil {
		t.Fatal(err)
	}
	before := readFile(t, path)
	p := Proposal{Slip: f.slip.Fingerprint, Action: "tool.a", With: "executor", When: f.start}
	res, d := b.Ledger().Reserve(p)
	if res == nil {
		t.Fatalf("not reserved: %+v", d)
	}
	later, _ := b.Ledger().Reserve(p)
	if err := b.AppendSigned(later, f.signedLine(t, Position{Seq: 1, Previous: f.slip.Fingerprint}, p, f.agent, f.exec)); err == nil || !strings.Contains(err.Error(), "turn") {
		t.Fatalf("out of turn: %v", err)
	}
	pos, err := res.Position(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	good := f.signedLine(t, pos, p, f.agent, f.exec)
	for _, c := range []struct {
		name string
		line SignedStub
		want string
	}{
		{"the stub signed by other keys", f.signedLine(t, pos, p, other, f.exec), "signature-invalid"},
		{"the countersignature by other keys", f.signedLine(t, pos, p, f.agent, other), "countersignature-invalid"},
		{"another place in the chain", f.signedLine(t, Position{Seq: 5, Previous: f.slip.Fingerprint}, p, f.agent, f.exec), "chain-broken"},
		{"no stub", SignedStub{Countersignature: good.Countersignature}, "record.SignChecked"},
		{"the countersignature as the stub", SignedStub{Stub: good.Countersignature}, "record.SignChecked"},
		{"the stub as the countersignature", SignedStub{Stub: good.Stub, Countersignature: good.Stub}, "not a countersignature"},
	} {
		err := b.AppendSigned(res, c.line)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if !bytes.Equal(readFile(t, path), before) {
		t.Fatal("a refused line changed the book")
	}
	f2 := newFixture(t, nil)
	b2, _ := openEmpty(t, f2)
	if err := b2.AppendSigned(res, good); err == nil || !strings.Contains(err.Error(), "not one of this book's") {
		t.Fatalf("another book's reservation: %v", err)
	}
	if err := b.AppendSigned(res, good); err != nil {
		t.Fatalf("the good line after the refused ones: %v", err)
	}
	if !CheckBook(readFile(t, path), f.opts).Summary.Intact {
		t.Fatal("the book is not intact")
	}
}

// TestAppendSignedWithApproval: the person's approval goes on the line and
// is checked in full (its passkey signature), and one for another action is
// refused.
func TestAppendSignedWithApproval(t *testing.T) {
	f := newFixture(t, map[string]any{"requires": []any{map[string]any{"need": "approval", "action": "tool.a"}}})
	b, path := openEmpty(t, f)
	if err := b.Append(f.slipLine()); err != nil {
		t.Fatal(err)
	}
	p := Proposal{Slip: f.slip.Fingerprint, Action: "tool.a", With: "executor", When: f.start}
	p.Approval = f.approval(t, p)
	res, d := b.Ledger().Reserve(p)
	if res == nil {
		t.Fatalf("not reserved: %+v", d)
	}
	pos, err := res.Position(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	signedFor := func(a *record.Record) SignedStub {
		stub, err := record.SignChecked(context.Background(), record.Stub, f.stubContent(pos, p, a.Fingerprint), f.agent)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := record.SignChecked(context.Background(), record.Countersignature, map[string]any{
			"type": "provared.countersignature.v0", "stub": stub.Fingerprint(), "when": canon.FormatTime(p.When)}, f.exec)
		if err != nil {
			t.Fatal(err)
		}
		return SignedStub{Stub: stub, Countersignature: cs, Approval: a}
	}
	wrong := f.approval(t, Proposal{Slip: f.slip.Fingerprint, Action: "tool.b", With: "executor", When: f.start})
	if err := b.AppendSigned(res, signedFor(wrong)); err == nil {
		t.Fatal("an approval of another action was taken")
	}
	s := signedFor(p.Approval)
	if err := b.AppendSigned(res, s); err != nil {
		t.Fatal(err)
	}
	res2 := CheckBook(readFile(t, path), f.opts)
	if !res2.Summary.Intact || !res2.Summary.WithinSlips || res2.Summary.Counts.Approved != 1 {
		t.Fatalf("%+v", res2.Summary)
	}
	want, _ := s.Line().Bytes()
	if got, _ := s.Bytes(); !bytes.Equal(got, want) {
		t.Fatal("the line with its approval is not the records' canonical text")
	}
	if n, err := s.Len(); err != nil || n != len(want) {
		t.Fatalf("Len %d, %v: the line with its approval is %d bytes", n, err, len(want))
	}
	if n, err := (SignedStub{Stub: s.Stub}).Len(); err != nil || n != len(`{"stub":}`)+s.Stub.EnvelopeLen() {
		t.Fatalf("Len %d, %v of a line with its stub alone", n, err)
	}
	exactLine(t, s, want)
}

// exactLine checks that s.Bytes() is want in a buffer with room for the
// line feed alone, so the writer adds it without copying the line (under
// the book's lock) and nothing more was allocated.
func exactLine(t *testing.T, s SignedStub, want []byte) {
	t.Helper()
	got, err := s.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) || cap(got) != len(got)+1 {
		t.Fatalf("the line is %d bytes in a buffer of %d (want %d bytes and one for the line feed); same text: %v",
			len(got), cap(got), len(want), bytes.Equal(got, want))
	}
}

// BenchmarkAppendStubCPU: the CPU one call's stub line costs, signed and
// taken into the book's state, the way it was (record.Sign, the line
// marshalled, then read as AppendStub reads it: parsed and every signature
// checked again under the lock) and signed once (record.SignChecked, the
// line put together from its envelopes, read as AppendSigned reads it),
// beside its floor, the four signatures alone. The write and its fsync,
// the same for both, are left out. The three run in turn in every round;
// each is reported as a ratio of CPU time (which other processes do not
// inflate) to the floor's: x-floor.
func BenchmarkAppendStubCPU(b *testing.B) {
	f := newFixture(b, map[string]any{"requires": []any{map[string]any{"need": "countersignature"}}})
	ctx := context.Background()
	slipLine, err := f.slipLine().Bytes()
	if err != nil {
		b.Fatal(err)
	}
	reader := func() *reader {
		r := newReader(f.opts, false)
		if _, err := r.readLine(slipLine, true); err != nil {
			b.Fatal(err)
		}
		return r
	}
	old, once := reader(), reader()
	oldPos, oncePos := Position{}, Position{}
	input := []byte(canon.B64(canon.MustMarshal(map[string]any{"type": "provared.stub.v0", "seq": int64(1)})))
	var floor, checkedAgain, signedOnce time.Duration
	when := f.start
	for b.Loop() {
		when = when.Add(time.Second)
		p := Proposal{Slip: f.slip.Fingerprint, Action: "tool.a", With: "executor", When: when}
		start := processCPU()
		for _, s := range []jwk.Signer{f.agent, f.exec} {
			for _, alg := range jwk.KeySetAlgs {
				if _, err := s.Sign(ctx, alg, input); err != nil {
					b.Fatal(err)
				}
			}
		}
		t1 := processCPU()
		line := f.line(b, oldPos, p)
		text, err := line.Bytes()
		if err == nil {
			_, err = old.readLine(text, true)
		}
		t2 := processCPU()
		if err != nil {
			b.Fatal(err)
		}
		s := f.signedLine(b, oncePos, p, f.agent, f.exec)
		text, err = s.Bytes()
		if err == nil {
			obj := map[string]any{"stub": signedValue{s.Stub.Record(), s.Stub.Keys()},
				"countersignature": signedValue{s.Countersignature.Record(), s.Countersignature.Keys()}}
			leaf := leafHash(text)
			once.leaf = &leaf
			_, err = once.readSigned(text, obj, true)
		}
		t3 := processCPU()
		if err != nil {
			b.Fatal(err)
		}
		floor, checkedAgain, signedOnce = floor+t1-start, checkedAgain+t2-t1, signedOnce+t3-t2
		oldPos = Position{Seq: oldPos.Seq + 1, Previous: line.Stub.Fingerprint}
		oncePos = Position{Seq: oncePos.Seq + 1, Previous: s.Fingerprint()}
	}
	b.ReportMetric(float64(floor.Nanoseconds())/float64(b.N), "floor-cpu-ns/op")
	b.ReportMetric(float64(checkedAgain)/float64(floor), "checked-again-x-floor")
	b.ReportMetric(float64(signedOnce)/float64(floor), "signed-once-x-floor")
}
