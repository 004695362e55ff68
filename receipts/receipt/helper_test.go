package receipt

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/pass"
	"github.com/seed-6e06167c/mcp-executor/receipts/passkey"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
)

// TestHelperStub: the engine's path for a helper agent, with real
// records: the agent's pass appended to the book, the helper's call
// reserved under it, its stub built from the reservation and its place,
// signed with the helper's keys and countersigned, appended without its
// signatures checked again; the book is then intact under the checker,
// with the helper's stub in a chain of its own. A stub signed with
// another key set than the pass names is refused.
func TestHelperStub(t *testing.T) {
	ctx := context.Background()
	pk, err := passkey.NewDevPasskey("https://sign.example.org", "example.org")
	if err != nil {
		t.Fatal(err)
	}
	agent, helper, exec := newSigner(t), newSigner(t), newSigner(t)
	start := time.Now().UTC().Truncate(time.Second).Add(-time.Hour)
	s, err := slip.WriteSlip(map[string]any{
		"issuer":  pk.Issuer("Ada"),
		"agent":   map[string]any{"keys": agent.Keys().Value(), "name": "assistant"},
		"actions": []any{"tool.a"}, "limits": []any{}, "passes": int64(1),
		"with":      []any{map[string]any{"id": "executor", "name": "the executor", "keys": exec.Keys().Value()}},
		"validFrom": canon.FormatTime(start), "validUntil": canon.FormatTime(start.Add(24 * time.Hour)), "purpose": "helpers",
	}, pk)
	if err != nil {
		t.Fatal(err)
	}
	bk, err := book.OpenBook(filepath.Join(t.TempDir(), "book.jsonl"), book.Options{IssuerKeys: []string{pk.Key().Thumbprint}})
	if err != nil {
		t.Fatal(err)
	}
	defer bk.Close()
	if err := bk.Append(book.Line{Slip: s.Record}); err != nil {
		t.Fatal(err)
	}
	p, err := pass.Fields{Slip: s.Fingerprint, To: pass.Helper{Name: "helper", Keys: helper.Keys()}, Actions: []string{"tool.a"},
		ValidFrom: start, ValidUntil: start.Add(2 * time.Hour), When: start}.Sign(ctx, agent)
	if err != nil {
		t.Fatal(err)
	}
	if err := bk.AppendPass(p); err != nil {
		t.Fatal(err)
	}
	call := func(under string, by jwk.Signer) error {
		res, d := bk.Ledger().Reserve(book.Proposal{Slip: s.Fingerprint, Pass: under, Action: "tool.a", With: "executor"})
		if !d.Allowed {
			t.Fatalf("refused: %v %v", d.Problems, d.Breaches)
		}
		defer res.Release()
		pos, err := res.Position(ctx)
		if err != nil {
			return err
		}
		f := StubFields{Action: "tool.a", With: "executor", Details: []record.Detail{record.TextDetail(LabelCall, canon.NewID())}}.At(res, pos)
		line, err := f.SignLine(ctx, by, exec, res.When())
		if err != nil {
			return err
		}
		return bk.AppendSigned(res, line)
	}
	for i, c := range []struct {
		pass string
		by   jwk.Signer
		ok   bool
	}{
		{p.Fingerprint, helper, true},
		{"", agent, true},
		{p.Fingerprint, helper, true},
		{p.Fingerprint, agent, false}, // the agent's keys under the helper's pass
		{"", helper, false},           // the helper's keys in the agent's chain
	} {
		if err := call(c.pass, c.by); (err == nil) != c.ok {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	res := book.CheckBook(readBook(t, bk.Path()), book.Options{IssuerKeys: []string{pk.Key().Thumbprint}})
	if !res.Summary.Intact || !res.Summary.WithinSlips || res.Summary.Counts.Stubs != 3 || res.Summary.Counts.Passes != 1 {
		t.Fatalf("the book: %+v", res.Summary)
	}
	if st, ok := bk.Ledger().Pass(p.Fingerprint); !ok || st.Seq != 2 {
		t.Fatalf("the helper's chain holds %d stubs, want 2", st.Seq)
	}
	if e := res.Entries[3]; e.Pass != "" || res.Entries[2].Pass != p.Fingerprint || res.Entries[4].Pass != p.Fingerprint {
		t.Fatalf("the stubs' passes: %q %q %q", res.Entries[2].Pass, e.Pass, res.Entries[4].Pass)
	}
}

func readBook(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
