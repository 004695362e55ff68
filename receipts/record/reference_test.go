package record

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
)

// TestVerifyHybridOnReferenceBooks reads the books of books.json, written
// and signed by the reference library, and checks every stub the reference
// reports as fully verified ("verified":"all") against its signer's keys:
// the slip's agent keys, or a pass's "to" keys for a helper. This ties
// Parse, SigningInput and VerifyHybrid (Ed25519 and ML-DSA-87) to another
// implementation's bytes.
func TestVerifyHybridOnReferenceBooks(t *testing.T) {
	f := readVectors(t, "books.json")
	verified := 0
	for _, raw := range f.Cases {
		var c struct {
			Name     string `json:"name"`
			Text     string `json:"text"`
			Expected struct {
				OK *struct {
					Entries []struct {
						Index    int    `json:"index"`
						Kind     string `json:"kind"`
						Verified string `json:"verified"`
					} `json:"entries"`
				} `json:"ok"`
			} `json:"expected"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatal(err)
		}
		if c.Expected.OK == nil {
			continue
		}
		lines := strings.Split(strings.TrimSuffix(c.Text, "\n"), "\n")
		signers := map[string]any{} // fingerprint of a slip or pass → the key list that signs under it
		readLine := func(i int) map[string]any {
			if i >= len(lines) {
				return nil
			}
			v, err := canon.Parse([]byte(lines[i]))
			if err != nil {
				return nil
			}
			m, _ := v.(map[string]any)
			return m
		}
		for i := range lines {
			line := readLine(i)
			if line == nil {
				continue
			}
			if v, ok := line["slip"]; ok {
				if r, err := Parse(v, Slip); err == nil {
					if agent, ok := r.Content["agent"].(map[string]any); ok {
						signers[r.Fingerprint] = agent["keys"]
					}
				}
			}
			if v, ok := line["pass"]; ok {
				if r, err := Parse(v, Pass); err == nil {
					if to, ok := r.Content["to"].(map[string]any); ok {
						signers[r.Fingerprint] = to["keys"]
					}
				}
			}
		}
		for _, e := range c.Expected.OK.Entries {
			if e.Kind != "stub" || e.Verified != "all" {
				continue
			}
			line := readLine(e.Index)
			if line == nil {
				t.Fatalf("%s: entry %d: no line", c.Name, e.Index)
			}
			r, err := Parse(line["stub"], Stub)
			if err != nil {
				t.Fatalf("%s: entry %d: %v", c.Name, e.Index, err)
			}
			under, _ := r.Content["slip"].(string)
			if p, ok := r.Content["pass"].(string); ok {
				under = p
			}
			ks, err := jwk.CheckKeySet(signers[under])
			if err != nil {
				t.Fatalf("%s: entry %d: signer's keys: %v", c.Name, e.Index, err)
			}
			if err := VerifyHybrid(r, ks); err != nil {
				t.Fatalf("%s: entry %d: %v", c.Name, e.Index, err)
			}
			if err := ValidateStub(r.Content); err != nil {
				t.Fatalf("%s: entry %d: a verified stub fails its content check: %v", c.Name, e.Index, err)
			}
			verified++
		}
	}
	if verified < 100 {
		t.Fatalf("only %d reference stubs verified", verified)
	}
}
