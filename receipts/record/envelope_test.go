package record

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
)

// TestRecordsVectors runs every case of records.json (parseRecord).
func TestRecordsVectors(t *testing.T) {
	f := readVectors(t, "records.json")
	for _, raw := range f.Cases {
		var c struct {
			Name     string          `json:"name"`
			Record   json.RawMessage `json:"record"`
			Kind     Kind            `json:"kind"`
			Expected expected        `json:"expected"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatal(err)
		}
		t.Run(c.Name, func(t *testing.T) {
			v := jsonValue(t, c.Record)
			r, err := Parse(v, c.Kind)
			if c.Expected.Refused != nil {
				if got := problem.Code(err); got != c.Expected.Refused.Code {
					t.Fatalf("code %q (%v), want %q", got, err, c.Expected.Refused.Code)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			var want struct {
				Kind        Kind            `json:"kind"`
				Fingerprint string          `json:"fingerprint"`
				Content     json.RawMessage `json:"content"`
				Signatures  int             `json:"signatures"`
			}
			if err := json.Unmarshal(c.Expected.OK, &want); err != nil {
				t.Fatal(err)
			}
			if r.Kind != want.Kind || r.Fingerprint != want.Fingerprint || len(r.Signatures) != want.Signatures {
				t.Fatalf("got %s %s %d, want %s %s %d", r.Kind, r.Fingerprint, len(r.Signatures), want.Kind, want.Fingerprint, want.Signatures)
			}
			if !reflect.DeepEqual(r.Content, jsonValue(t, want.Content)) {
				t.Fatal("content differs")
			}
			if !reflect.DeepEqual(r.Value(), v) {
				t.Fatal("Value does not give back the envelope read")
			}
			if r.Signatures[0].Alg != PasskeyAlg || r.Signatures[0].Header == nil || r.Signatures[0].Header.ClientDataJSON == "" {
				t.Fatal("passkey signature entry not read")
			}
		})
	}
}

// TestProtectedHeadersAreTheFormatsTexts compares the built headers with
// the b64u forms the format description lists.
func TestProtectedHeadersAreTheFormatsTexts(t *testing.T) {
	want := map[Kind][]string{
		Slip:             {"eyJ0eXAiOiJ2bmQucHJvdmFyZWQuc2xpcC52MCtqc29uIiwiYWxnIjoicHJvdmEucmVkL3dlYmF1dGhuL3YwIn0"},
		Stub:             {"eyJ0eXAiOiJ2bmQucHJvdmFyZWQuc3R1Yi52MCtqc29uIiwiYWxnIjoiRWQyNTUxOSJ9", "eyJ0eXAiOiJ2bmQucHJvdmFyZWQuc3R1Yi52MCtqc29uIiwiYWxnIjoiTUwtRFNBLTg3In0"},
		Countersignature: {"eyJ0eXAiOiJ2bmQucHJvdmFyZWQuY291bnRlcnNpZ25hdHVyZS52MCtqc29uIiwiYWxnIjoiRWQyNTUxOSJ9", "eyJ0eXAiOiJ2bmQucHJvdmFyZWQuY291bnRlcnNpZ25hdHVyZS52MCtqc29uIiwiYWxnIjoiTUwtRFNBLTg3In0"},
		Refusal:          {"eyJ0eXAiOiJ2bmQucHJvdmFyZWQucmVmdXNhbC52MCtqc29uIiwiYWxnIjoiRWQyNTUxOSJ9", "eyJ0eXAiOiJ2bmQucHJvdmFyZWQucmVmdXNhbC52MCtqc29uIiwiYWxnIjoiTUwtRFNBLTg3In0"},
		Approval:         {"eyJ0eXAiOiJ2bmQucHJvdmFyZWQuYXBwcm92YWwudjAranNvbiIsImFsZyI6InByb3ZhLnJlZC93ZWJhdXRobi92MCJ9"},
		Cancellation:     {"eyJ0eXAiOiJ2bmQucHJvdmFyZWQuY2FuY2VsbGF0aW9uLnYwK2pzb24iLCJhbGciOiJwcm92YS5yZWQvd2ViYXV0aG4vdjAifQ"},
	}
	for k, w := range want {
		if got := k.ProtectedHeaders(); !reflect.DeepEqual(got, w) {
			t.Errorf("%s: %v, want %v", k, got, w)
		}
	}
	if len(knownHeaders) != 22 {
		t.Fatalf("%d known protected headers, want 22", len(knownHeaders))
	}
	if got := Seal.ProtectedHeaders(); len(got) != 3 {
		t.Fatalf("a seal has %d headers", len(got))
	}
	if Kind("x").Known() || Kind("x").ContentType() != "" || Kind("x").ProtectedHeaders() != nil || !Slip.Passkey() || Stub.Passkey() {
		t.Fatal("kind table")
	}
}

// testSigner is a real local key set, made once for the package's tests.
var testSigner = func() *jwk.LocalSigner {
	s, err := jwk.NewLocalSigner(jwk.NewSeeds())
	if err != nil {
		panic(err)
	}
	return s
}()

func stubContent() map[string]any {
	return map[string]any{
		"type":    "provared.stub.v0",
		"id":      "AgICAgICAgICAgICAgICAg",
		"slip":    "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE",
		"seq":     int64(0),
		"action":  "provared.code.run",
		"with":    "executor",
		"details": []any{map[string]any{"name": "provared.tool-name", "sha256": "AwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwM"}},
		"when":    "2026-11-29T19:00:00Z",
	}
}

func signedStubValue(t testing.TB) map[string]any {
	t.Helper()
	r, err := Sign(context.Background(), Stub, stubContent(), testSigner)
	if err != nil {
		t.Fatal(err)
	}
	return r.Value()
}

// deepCopy copies a JSON value so a case can change it freely.
func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = deepCopy(e)
		}
		return l
	}
	return v
}

func b64(s string) string { return canon.B64([]byte(s)) }

// TestParseOrderOfChecks changes a good stub envelope one way at a time and
// expects the code the reference gives, which also fixes the order in which
// the checks run.
func TestParseOrderOfChecks(t *testing.T) {
	base := signedStubValue(t)
	sig := func(v map[string]any, i int) map[string]any {
		return v["signatures"].([]any)[i].(map[string]any)
	}
	tests := []struct {
		name   string
		change func(v map[string]any) any
		kind   Kind
		code   string
	}{
		{"good", func(v map[string]any) any { return v }, Stub, ""},
		{"not an object", func(v map[string]any) any { return []any{v} }, Stub, CodeBadEnvelope},
		{"null", func(v map[string]any) any { return nil }, Stub, CodeBadEnvelope},
		{"an extra member", func(v map[string]any) any { v["x"] = "y"; return v }, Stub, CodeBadEnvelope},
		{"no payload", func(v map[string]any) any { delete(v, "payload"); return v }, Stub, CodeBadEnvelope},
		{"payload not text", func(v map[string]any) any { v["payload"] = int64(1); return v }, Stub, CodeBadEnvelope},
		{"signatures not a list", func(v map[string]any) any { v["signatures"] = map[string]any{}; return v }, Stub, CodeBadEnvelope},
		{"too large, and bad base64url", func(v map[string]any) any { v["payload"] = strings.Repeat("=", MaxRecordSize); return v }, Stub, CodeTooLarge},
		{"exactly the largest size, counted in UTF-16 units, not bytes", func(v map[string]any) any {
			room := MaxRecordSize - len(v["payload"].(string)) - len(sig(v, 0)["protected"].(string)) -
				len(sig(v, 1)["protected"].(string)) - len(sig(v, 1)["signature"].(string))
			sig(v, 0)["signature"] = strings.Repeat("é", room) // 2 bytes, 1 unit each
			return v
		}, Stub, CodeBadBase64url},
		{"one unit over the largest size", func(v map[string]any) any {
			room := MaxRecordSize - len(v["payload"].(string)) - len(sig(v, 0)["protected"].(string)) -
				len(sig(v, 1)["protected"].(string)) - len(sig(v, 1)["signature"].(string))
			sig(v, 0)["signature"] = strings.Repeat("😀", room/2+1) // 2 units each
			return v
		}, Stub, CodeTooLarge},
		{"an entry with a header", func(v map[string]any) any { sig(v, 0)["header"] = map[string]any{}; return v }, Stub, CodeBadEnvelope},
		{"an entry that is text", func(v map[string]any) any { v["signatures"].([]any)[0] = "x"; return v }, Stub, CodeBadEnvelope},
		{"protected not text", func(v map[string]any) any { sig(v, 0)["protected"] = int64(1); return v }, Stub, CodeBadEnvelope},
		{"protected not base64url", func(v map[string]any) any { sig(v, 0)["protected"] = sig(v, 0)["protected"].(string) + "="; return v }, Stub, CodeBadBase64url},
		{"protected not UTF-8", func(v map[string]any) any { sig(v, 0)["protected"] = canon.B64([]byte{0xff}); return v }, Stub, CodeUnknownType},
		{"protected canonical order", func(v map[string]any) any {
			sig(v, 0)["protected"] = b64(`{"alg":"Ed25519","typ":"vnd.provared.stub.v0+json"}`)
			return v
		}, Stub, CodeUnknownType},
		{"a refusal header", func(v map[string]any) any { sig(v, 0)["protected"] = Refusal.ProtectedHeaders()[0]; return v }, Stub, CodeTypeMismatch},
		{"read as a refusal", func(v map[string]any) any { return v }, Refusal, CodeTypeMismatch},
		{"read as a slip", func(v map[string]any) any { return v }, Slip, CodeBadEnvelope},
		{"signature not base64url", func(v map[string]any) any { sig(v, 1)["signature"] = "A"; return v }, Stub, CodeBadBase64url},
		{"the ML-DSA half removed", func(v map[string]any) any {
			v["signatures"] = v["signatures"].([]any)[:1]
			return v
		}, Stub, CodeBadLayout},
		{"the halves swapped", func(v map[string]any) any {
			l := v["signatures"].([]any)
			l[0], l[1] = l[1], l[0]
			return v
		}, Stub, CodeBadLayout},
		{"no signatures", func(v map[string]any) any { v["signatures"] = []any{}; return v }, Stub, CodeBadLayout},
		{"payload not base64url", func(v map[string]any) any { v["payload"] = "A"; return v }, Stub, CodeBadBase64url},
		{"payload not UTF-8", func(v map[string]any) any { v["payload"] = canon.B64([]byte{'"', 0xff, '"'}); return v }, Stub, CodeNotCanonical},
		{"payload not canonical", func(v map[string]any) any { v["payload"] = b64(`{"type": "provared.stub.v0"}`); return v }, Stub, CodeNotCanonical},
		{"payload a list", func(v map[string]any) any { v["payload"] = b64(`[]`); return v }, Stub, CodeBadField},
		{"payload of another type", func(v map[string]any) any { v["payload"] = b64(`{"type":"provared.refusal.v0"}`); return v }, Stub, CodeTypeMismatch},
		{"payload with no type", func(v map[string]any) any { v["payload"] = b64(`{}`); return v }, Stub, CodeTypeMismatch},
		{"payload with a type that is not text", func(v map[string]any) any { v["payload"] = b64(`{"type":1}`); return v }, Stub, CodeTypeMismatch},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.change(deepCopy(base).(map[string]any))
			r, err := Parse(v, tc.kind)
			if got := problem.Code(err); got != tc.code {
				t.Fatalf("code %q (%v), want %q", got, err, tc.code)
			}
			if tc.code == "" && !reflect.DeepEqual(r.Value(), v) {
				t.Fatal("Value does not give back the envelope read")
			}
		})
	}
	if _, err := Parse(base, Kind("note")); problem.Code(err) != problem.CheckFailed {
		t.Fatalf("an unknown kind: %v", err)
	}
}

// TestParsePasskeyHeader covers the passkey entry's "header": exactly its
// two members (bad-envelope otherwise), values kept as stored.
func TestParsePasskeyHeader(t *testing.T) {
	payload := b64(`{"type":"provared.approval.v0"}`)
	entry := func(h any) map[string]any {
		return map[string]any{"payload": payload, "signatures": []any{map[string]any{
			"protected": Approval.ProtectedHeaders()[0], "signature": "AAAA", "header": h,
		}}}
	}
	tests := []struct {
		name   string
		header any
		code   string
	}{
		{"two texts", map[string]any{"authenticatorData": "AAAA", "clientDataJSON": "e30"}, ""},
		{"values that are not text", map[string]any{"authenticatorData": int64(1), "clientDataJSON": []any{}}, ""},
		{"one member", map[string]any{"authenticatorData": "AAAA"}, CodeBadEnvelope},
		{"an extra member", map[string]any{"authenticatorData": "AAAA", "clientDataJSON": "e30", "x": "y"}, CodeBadEnvelope},
		{"a list", []any{"AAAA", "e30"}, CodeBadEnvelope},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := entry(tc.header)
			r, err := Parse(v, Approval)
			if got := problem.Code(err); got != tc.code {
				t.Fatalf("code %q (%v), want %q", got, err, tc.code)
			}
			if err == nil && !reflect.DeepEqual(r.Value(), v) {
				t.Fatal("Value does not give back the envelope read")
			}
		})
	}
	// A record built in memory (as a passkey writer does) gives its header from the strings.
	r := &Record{Payload: payload, Signatures: []Signature{{Protected: "p", Signature: "s", Header: &PasskeyHeader{AuthenticatorData: "a", ClientDataJSON: "c"}}}}
	want := map[string]any{"payload": payload, "signatures": []any{map[string]any{"protected": "p", "signature": "s", "header": map[string]any{"authenticatorData": "a", "clientDataJSON": "c"}}}}
	if !reflect.DeepEqual(r.Value(), want) {
		t.Fatal("Value of a record built in memory")
	}
	if string(r.SigningInput(0)) != "p."+payload {
		t.Fatal("SigningInput")
	}
}

func TestSizeCountsAsTheReference(t *testing.T) {
	v := map[string]any{
		"payload": "abc",
		"signatures": []any{
			map[string]any{"protected": "de", "signature": int64(5), "header": map[string]any{"a": "😀", "b": int64(1)}},
			[]any{"xyz", int64(1)},
			"ignored",
		},
	}
	if got := Size(v); got != 3+2+2+3 {
		t.Fatalf("size %d, want 10", got)
	}
	if Size("x") != 0 || Size(map[string]any{"payload": "ab"}) != 2 {
		t.Fatal("size of non-records")
	}
}
