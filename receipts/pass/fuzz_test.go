package pass

import (
	"bytes"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
)

// fuzzSeedContent is a sound pass's content as canonical bytes.
func fuzzSeedContent(t testing.TB) []byte {
	t.Helper()
	helper, err := jwk.NewLocalSigner(bytes.Repeat([]byte{3}, 32), bytes.Repeat([]byte{4}, 32))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 10, 5, 8, 0, 0, 0, time.UTC)
	f := Fields{
		ID: canon.B64(bytes.Repeat([]byte{2}, 16)), Slip: canon.B64(bytes.Repeat([]byte{1}, 32)),
		To: Helper{Name: "helper", Keys: helper.Keys()}, Actions: []string{"tool.a", "tool.b"},
		Limits:    []slip.Limit{{Action: "tool.a", Kind: "max", Value: 100, Unit: "GBP", Per: 3600}, {Action: "tool.b", Kind: "count", Value: 3}},
		ValidFrom: start, ValidUntil: start.Add(time.Hour), When: start,
	}
	return canon.MustMarshal(f.Content())
}

// FuzzParse: whatever the bytes, a pass's content is refused or read; one
// that is read is canonical, and writing it again from what was read gives
// the very same bytes (nothing read is dropped or changed: one reading).
func FuzzParse(f *testing.F) {
	f.Add(fuzzSeedContent(f))
	f.Add([]byte(`{"actions":[],"type":"provared.pass.v0"}`))
	f.Add([]byte(`{"from":"","limits":[{"action":"a","each":1,"per":2,"unit":"U"}]}`))
	f.Fuzz(func(t *testing.T, text []byte) {
		v, err := canon.Parse(text)
		if err != nil {
			return
		}
		p, err := Parse(v)
		if err != nil {
			return
		}
		c, ok := v.(map[string]any)
		if !ok || c["type"] == nil {
			return // "type" is the envelope's to confirm; only a full pass is written again
		}
		if c["type"] != Type {
			return
		}
		back := Fields{ID: p.ID, Slip: p.Slip, From: p.From, To: p.To, Actions: p.Actions, Limits: p.Limits,
			ValidFrom: p.ValidFrom, ValidUntil: p.ValidUntil, When: p.When}.Content()
		if again := canon.MustMarshal(back); !bytes.Equal(again, text) {
			t.Fatalf("read and written again, the pass changed:\n%s\n%s", text, again)
		}
	})
}

// FuzzReadText: a pass file handed over is refused or read, never a panic;
// one that is read is a pass record whose content passed.
func FuzzReadText(f *testing.F) {
	f.Add([]byte(`{"payload":"e30","signatures":[]}`))
	f.Add([]byte("{}\n"))
	f.Add(append([]byte(`{"payload":"`), append([]byte(canon.B64(fuzzSeedContent(f))), []byte(`","signatures":[{"protected":"x","signature":"y"}]}`)...)...))
	f.Fuzz(func(t *testing.T, text []byte) {
		rec, p, err := ReadText(text)
		if err != nil {
			return
		}
		if rec == nil || p == nil || rec.Kind != "pass" || ValidateContent(rec.Content) != nil {
			t.Fatalf("read a pass that does not pass: %v %v", rec, p)
		}
	})
}
