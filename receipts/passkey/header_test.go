package passkey

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// TestHeaderValuesMustBeText: a header value that is not text fails the
// first step (base64url decoding of both values, slip.js
// checkPasskeySignature) with passkey-bad-data, before the client data is
// read; it is not taken as an empty text that lets later steps answer
// with their own codes.
func TestHeaderValuesMustBeText(t *testing.T) {
	p := ed25519Passkey(t)
	payload := canon.B64(canon.MustMarshal(map[string]any{"type": "provared.slip.v0"}))
	protected, _ := ProtectedHeader(record.Slip)
	challenge := sha256.Sum256([]byte(protected + "." + payload))
	wrongChallenge := `{"type":"webauthn.get","challenge":"AAAA","origin":"` + testOrigin + `"}`
	for _, tc := range []struct {
		name   string
		member string
		value  any
		client string
	}{
		{"authenticatorData a number, client data for another challenge", "authenticatorData", int64(5), wrongChallenge},
		{"authenticatorData a list, client data of another type", "authenticatorData", []any{}, `{"type":"webauthn.create"}`},
		{"authenticatorData an object", "authenticatorData", map[string]any{}, ""},
		{"clientDataJSON a number", "clientDataJSON", int64(5), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := Envelope(payload, protected, p.assert(t, challenge[:], tc.client))
			env["signatures"].([]any)[0].(map[string]any)["header"].(map[string]any)[tc.member] = tc.value
			r, err := record.Parse(env, record.Slip)
			if err != nil {
				t.Fatalf("the envelope is refused: %v", err)
			}
			err = Verify(p.key, testOrigin, testRPID, r)
			if got := problem.Code(err); got != "passkey-bad-data" {
				t.Fatalf("code %q (%v), want passkey-bad-data", got, err)
			}
		})
	}
}

// TestDeepClientDataIsJSON: JSON.parse reads JSON nested to any depth, so
// client data with a deeply nested member is still read, and the steps
// after it answer with their own codes (encoding/json alone stops at
// 10,000 levels and would say passkey-bad-data).
func TestDeepClientDataIsJSON(t *testing.T) {
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	for _, tc := range []struct{ client, code string }{
		{`{"type":"webauthn.create","x":` + deep + `}`, "passkey-wrong-type"},
		{`{"x":` + deep + `,"type":"webauthn.get","challenge":"AAAA"}`, "passkey-challenge-mismatch"},
		{`{"type":"webauthn.get","x":` + deep[:len(deep)-1] + `}`, "passkey-bad-data"},
		{deep, "passkey-bad-data"},
	} {
		c, err := ParseClientData([]byte(tc.client))
		if tc.code == "passkey-bad-data" {
			if problem.Code(err) != tc.code {
				t.Errorf("%.40s…: %v, want %s", tc.client, err, tc.code)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%.40s…: %v", tc.client, err)
		}
		if _, ok := c["x"]; !ok {
			t.Errorf("the nested member is not kept")
		}
		_, err = CheckAssertion(ed25519Passkey(t).key, testRPID, testOrigin, []byte("x"), Assertion{ClientDataJSON: []byte(tc.client)}, nil)
		if got := problem.Code(err); got != tc.code {
			t.Errorf("%.40s…: code %q, want %q", tc.client, got, tc.code)
		}
	}
}

// FuzzParseClientData compares ParseClientData with encoding/json on the
// members the checks read, wherever encoding/json can read the text.
func FuzzParseClientData(f *testing.F) {
	for _, s := range []string{`{"type":"webauthn.get","challenge":"x","origin":"o","crossOrigin":true}`, `{"a":{"b":[1,2]},"type":1}`, `{"type":"a","type":"b"}`, `[]`, `{"a":1,}`, `{} {}`, ` {"crossOrigin":null} `, `{"origin":"\ud800"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := ParseClientData(b)
		var want map[string]any
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		werr := dec.Decode(&want)
		if werr == nil {
			if _, e := dec.Token(); e != io.EOF {
				werr = errors.New("trailing data")
			}
		}
		if !utf8.Valid(b) {
			werr = errors.New("not utf-8")
		}
		if (err == nil) != (werr == nil) {
			t.Fatalf("%q: error %v, encoding/json %v", b, err, werr)
		}
		if err != nil {
			return
		}
		for _, k := range []string{"type", "challenge", "origin", "crossOrigin"} {
			g, w := got[k], want[k]
			switch w.(type) {
			case string, bool, json.Number, nil:
				if g != w {
					t.Fatalf("%q: %s = %#v, encoding/json %#v", b, k, g, w)
				}
			default:
				if _, isText := g.(string); isText {
					t.Fatalf("%q: %s = %#v, encoding/json %#v", b, k, g, w)
				}
				if _, isBool := g.(bool); isBool {
					t.Fatalf("%q: %s = %#v, encoding/json %#v", b, k, g, w)
				}
			}
		}
		if len(got) != len(want) {
			t.Fatalf("%q: %d members, encoding/json %d", b, len(got), len(want))
		}
	})
}
