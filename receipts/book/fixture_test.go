package book

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/passkey"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
)

// fixture is a person with a development passkey, an agent and the
// executor (each a local key set), and one slip: real records, signed and
// checked as in use.
type fixture struct {
	pk    *passkey.DevPasskey
	agent *jwk.LocalSigner
	exec  *jwk.LocalSigner
	slip  *slip.Slip
	opts  Options
	start time.Time
}

// fixed seeds keep the key sets the same from run to run.
func seeds(b byte) ([]byte, []byte) {
	ed, ml := make([]byte, 32), make([]byte, 32)
	for i := range ed {
		ed[i], ml[i] = b, b+1
	}
	return ed, ml
}

func newFixture(t testing.TB, fields map[string]any) *fixture {
	t.Helper()
	pk, err := passkey.NewDevPasskey("https://sign.example.org", "example.org")
	if err != nil {
		t.Fatal(err)
	}
	agent, err := jwk.NewLocalSigner(seeds(1))
	if err != nil {
		t.Fatal(err)
	}
	exec, err := jwk.NewLocalSigner(seeds(7))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	content := map[string]any{
		"issuer":     pk.Issuer("Ada"),
		"agent":      map[string]any{"keys": agent.Keys().Value(), "name": "assistant"},
		"actions":    []any{"tool.a", "tool.b"},
		"limits":     []any{},
		"with":       []any{map[string]any{"id": "executor", "name": "the executor", "keys": exec.Keys().Value()}},
		"validFrom":  canon.FormatTime(start),
		"validUntil": canon.FormatTime(start.Add(30 * 24 * time.Hour)),
		"purpose":    "tests of the book",
	}
	for k, v := range fields {
		content[k] = v
	}
	s, err := slip.WriteSlip(content, pk)
	if err != nil {
		t.Fatalf("writing the slip: %v", err)
	}
	return &fixture{pk: pk, agent: agent, exec: exec, slip: s, start: start,
		opts: Options{IssuerKeys: []string{pk.Key().Thumbprint}}}
}

func (f *fixture) slipLine() Line { return Line{Slip: f.slip.Record} }

// stub signs the stub of a proposal at a place in the chain.
func (f *fixture) stub(t testing.TB, pos Position, p Proposal, approval string) *record.Record {
	t.Helper()
	r, err := record.Sign(context.Background(), record.Stub, f.stubContent(pos, p, approval), f.agent)
	if err != nil {
		t.Fatalf("signing a stub: %v", err)
	}
	return r
}

// stubContent is the content of the stub of a proposal at a place in the chain.
func (f *fixture) stubContent(pos Position, p Proposal, approval string) map[string]any {
	c := map[string]any{
		"type": "provared.stub.v0", "id": canon.NewID(), "slip": f.slip.Fingerprint,
		"seq": pos.Seq, "action": p.Action, "when": canon.FormatTime(p.When),
	}
	if pos.Seq > 0 {
		c["previous"] = pos.Previous
	}
	if p.Amount != nil {
		c["amount"] = map[string]any{"unit": p.Amount.Unit, "value": p.Amount.Value}
	}
	if p.With != "" {
		c["with"] = p.With
	}
	if len(p.Details) > 0 {
		pc := p.content()
		c["details"] = pc["details"]
	}
	if approval != "" {
		c["approval"] = approval
	}
	return c
}

func (f *fixture) countersign(t testing.TB, stub *record.Record, when time.Time) *record.Record {
	t.Helper()
	c := map[string]any{"type": "provared.countersignature.v0", "stub": stub.Fingerprint, "when": canon.FormatTime(when)}
	r, err := record.Sign(context.Background(), record.Countersignature, c, f.exec)
	if err != nil {
		t.Fatalf("countersigning: %v", err)
	}
	return r
}

// approval has the person approve exactly this proposal.
func (f *fixture) approval(t testing.TB, p Proposal) *record.Record {
	t.Helper()
	af := slip.ApprovalFields{Slip: f.slip.Fingerprint, Action: p.Action, With: p.With, When: p.When}
	if p.Amount != nil {
		af.Amount = &record.Amount{Unit: p.Amount.Unit, Value: p.Amount.Value}
	}
	for _, d := range p.Details {
		af.Details = append(af.Details, record.Detail{Name: d.Name, SHA256: d.SHA256})
	}
	c := af.Content()
	r, err := f.pk.SignRecord(record.Approval, c)
	if err != nil {
		t.Fatalf("signing an approval: %v", err)
	}
	return r
}

// line makes the whole line of a stub for a proposal: the stub, the
// executor's countersignature when it names the executor, and the approval.
func (f *fixture) line(t testing.TB, pos Position, p Proposal) Line {
	t.Helper()
	approvalFP := ""
	if p.Approval != nil {
		approvalFP = p.Approval.Fingerprint
	}
	s := f.stub(t, pos, p, approvalFP)
	l := Line{Stub: s, Approval: p.Approval}
	if p.With == "executor" {
		l.Countersignature = f.countersign(t, s, p.When)
	}
	return l
}

func lineBytes(t testing.TB, l Line) []byte {
	t.Helper()
	b, err := l.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
