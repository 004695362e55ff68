package pass

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
)

type vectorCase struct {
	Name     string          `json:"name"`
	Content  json.RawMessage `json:"content"`
	Seed     string          `json:"seed"`
	Fields   json.RawMessage `json:"fields"`
	Expected struct {
		OK      json.RawMessage `json:"ok"`
		Refused *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"refused"`
	} `json:"expected"`
}

func readVectors(t testing.TB, name, function string) []vectorCase {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "provared-vectors", name))
	if err != nil {
		t.Fatalf("reading vectors: %v", err)
	}
	var f struct {
		Function string       `json:"function"`
		Cases    []vectorCase `json:"cases"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatalf("reading %s: %v", name, err)
	}
	if f.Function != function || len(f.Cases) == 0 {
		t.Fatalf("%s: function %q with %d cases, want %s", name, f.Function, len(f.Cases), function)
	}
	return f.Cases
}

// value decodes JSON as canonical values hold it: whole numbers as int64,
// other numbers as float64 (which no check takes as a number).
func value(t testing.TB, raw []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decoding: %v", err)
	}
	return numbers(v)
}

func numbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = numbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbers(e)
		}
	case json.Number:
		if n, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return n
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

// TestContentVectors runs every case of pass-contents.json: the code of
// each refusal, and every sound content accepted.
func TestContentVectors(t *testing.T) {
	cases := readVectors(t, "pass-contents.json", "validatePassContent")
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			_, err := Parse(value(t, c.Content))
			if c.Expected.Refused != nil {
				if got := problem.Code(err); got != c.Expected.Refused.Code {
					t.Fatalf("code %q (%v), want %q (%s)", got, err, c.Expected.Refused.Code, c.Expected.Refused.Message)
				}
				// The words are ours, but the member named first is the
				// reference's: it shows the order of the checks.
				want, _, _ := strings.Cut(c.Expected.Refused.Message, ":")
				if got, _, _ := strings.Cut(messageOf(err), ":"); got != want {
					t.Fatalf("the fault is reported at %q (%v), want at %q", got, err, want)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
		})
	}
	t.Logf("pass-contents.json: %d cases", len(cases))
}

// truthy is JavaScript's truth of a value, as the reference's writer tests
// "from".
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

// contentOf builds a pass's content from the writer's fields as the
// reference's writePass does: limits default to none (absent or null),
// "from" is written only when truthy, "when" is in milliseconds.
func contentOf(f map[string]any) map[string]any {
	c := map[string]any{"type": Type}
	for _, n := range []string{"id", "slip", "to", "actions", "validFrom", "validUntil"} {
		if v, ok := f[n]; ok {
			c[n] = v
		}
	}
	c["limits"] = []any{}
	if l, ok := f["limits"]; ok && l != nil {
		c["limits"] = l
	}
	if truthy(f["from"]) {
		c["from"] = f["from"]
	}
	if ms, ok := f["when"].(int64); ok {
		c["when"] = canon.FormatTime(time.UnixMilli(ms))
	}
	return c
}

// TestWrittenVectors runs every case of passes-written.json: the payload,
// the fingerprint and the Ed25519 signature (from the case's seed) must be
// exact; the ML-DSA-87 key is made afresh, as the reference's tooling
// does, and its signature must check. The pass is then read back.
func TestWrittenVectors(t *testing.T) {
	cases := readVectors(t, "passes-written.json", "writePass")
	for _, c := range cases {
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
			r, err := Sign(context.Background(), contentOf(value(t, c.Fields).(map[string]any)), signer)
			if c.Expected.Refused != nil {
				if got := problem.Code(err); got != c.Expected.Refused.Code {
					t.Fatalf("code %q (%v), want %q (%s)", got, err, c.Expected.Refused.Code, c.Expected.Refused.Message)
				}
				want, _, _ := strings.Cut(c.Expected.Refused.Message, ":")
				if got, _, _ := strings.Cut(messageOf(err), ":"); got != want {
					t.Fatalf("the fault is reported at %q (%v), want at %q", got, err, want)
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
				t.Fatalf("payload or fingerprint differ: %s, want %s", r.Fingerprint, want.Fingerprint)
			}
			// Prepare gives the same content and fingerprint before any signature.
			prep, err := Prepare(contentOf(value(t, c.Fields).(map[string]any)))
			if err != nil {
				t.Fatalf("Prepare: %v", err)
			}
			if prep.Fingerprint() != want.Fingerprint {
				t.Fatalf("Prepare: fingerprint %q, want %s", prep.Fingerprint(), want.Fingerprint)
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
			back, p, err := Read(r.Value())
			if err != nil || back.Fingerprint != r.Fingerprint || p.Slip != r.Content["slip"] {
				t.Fatalf("the written pass does not read back: %v", err)
			}
		})
	}
	t.Logf("passes-written.json: %d cases", len(cases))
}

func messageOf(err error) string {
	if pe, ok := errors.AsType[*problem.Error](err); ok {
		return pe.Message
	}
	return err.Error()
}
