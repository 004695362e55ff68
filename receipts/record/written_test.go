package record

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
)

// The writer vectors (writeRefusal, writeAcknowledgement) give the writer's
// JavaScript "fields"; these functions build the content from them as the
// reference writers do (a falsy amount or pass is left out, "when" is in
// milliseconds, unknown fields are ignored), and Sign writes it.

func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case string:
		return x != ""
	case int64:
		return x != 0
	case float64:
		return x != 0
	case bool:
		return x
	}
	return true
}

func contentFromFields(kind Kind, fields map[string]any, names []string, optional []string) map[string]any {
	c := map[string]any{"type": kind.ContentType()}
	for _, n := range names {
		if v, ok := fields[n]; ok {
			c[n] = v
		}
	}
	for _, n := range optional {
		if truthy(fields[n]) {
			c[n] = fields[n]
		}
	}
	if ms, ok := fields["when"].(int64); ok {
		c["when"] = canon.FormatTime(time.UnixMilli(ms))
	}
	return c
}

// TestWrittenVectors runs every case of refusals-written.json and
// acknowledgements-written.json: the payload, the fingerprint and the
// Ed25519 signature (from the case's seed) must be exact; the ML-DSA-87 key
// is made afresh, as in the reference's tooling, and its signature must
// check.
func TestWrittenVectors(t *testing.T) {
	files := []struct {
		file     string
		function string
		kind     Kind
		names    []string
		optional []string
	}{
		{"refusals-written.json", "writeRefusal", Refusal, []string{"id", "slip", "by", "action", "reason"}, []string{"amount"}},
		{"acknowledgements-written.json", "writeAcknowledgement", Acknowledgement, []string{"id", "slip", "cancellation"}, []string{"pass"}},
	}
	for _, file := range files {
		t.Run(file.file, func(t *testing.T) {
			f := readVectors(t, file.file)
			if f.Function != file.function {
				t.Fatalf("function %q, want %q", f.Function, file.function)
			}
			for _, raw := range f.Cases {
				var c struct {
					Name     string          `json:"name"`
					Seed     string          `json:"seed"`
					Fields   json.RawMessage `json:"fields"`
					Expected expected        `json:"expected"`
				}
				if err := json.Unmarshal(raw, &c); err != nil {
					t.Fatal(err)
				}
				if _, skip := setAside[file.file][c.Name]; skip {
					continue
				}
				t.Run(c.Name, func(t *testing.T) {
					seed, err := hex.DecodeString(c.Seed)
					if err != nil {
						t.Fatal(err)
					}
					_, mlSeed := jwk.NewSeeds()
					signer, err := jwk.NewLocalSigner(seed, mlSeed)
					if err != nil {
						t.Fatal(err)
					}
					fields := jsonValue(t, c.Fields).(map[string]any)
					content := contentFromFields(file.kind, fields, file.names, file.optional)
					r, err := Sign(context.Background(), file.kind, content, signer)
					if c.Expected.Refused != nil {
						if got := problem.Code(err); got != c.Expected.Refused.Code {
							t.Fatalf("code %q (%v), want %q (%s)", got, err, c.Expected.Refused.Code, c.Expected.Refused.Message)
						}
						return
					}
					if err != nil {
						t.Fatalf("refused: %v", err)
					}
					var want struct {
						Fingerprint string `json:"fingerprint"`
						Payload     string `json:"payload"`
						Signatures  []struct {
							Protected string `json:"protected"`
							Signature string `json:"signature"`
							Check     string `json:"check"`
						} `json:"signatures"`
					}
					if err := json.Unmarshal(c.Expected.OK, &want); err != nil {
						t.Fatal(err)
					}
					if r.Payload != want.Payload || r.Fingerprint != want.Fingerprint {
						t.Fatalf("payload or fingerprint differ: %s", r.Fingerprint)
					}
					if len(want.Signatures) != 2 || len(r.Signatures) != 2 {
						t.Fatal("want two signatures")
					}
					if r.Signatures[0].Protected != want.Signatures[0].Protected || r.Signatures[0].Signature != want.Signatures[0].Signature {
						t.Fatal("the Ed25519 signature is not byte-exact")
					}
					if r.Signatures[1].Protected != want.Signatures[1].Protected || want.Signatures[1].Check != "valid" {
						t.Fatal("the ML-DSA-87 entry differs")
					}
					sig, err := r.Signatures[1].Bytes()
					if err != nil || !signer.Keys().MLDSA87.Verify(r.SigningInput(1), sig) {
						t.Fatal("the ML-DSA-87 signature does not check with the key from the seed")
					}
					back, err := Parse(r.Value(), file.kind)
					if err != nil {
						t.Fatalf("the written record does not parse: %v", err)
					}
					if back.Fingerprint != r.Fingerprint {
						t.Fatal("fingerprint read back differs")
					}
				})
			}
		})
	}
}
