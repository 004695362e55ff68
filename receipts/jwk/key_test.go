package jwk

import (
	"encoding/json"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
)

// TestKeysVectors runs every case of keys.json (checkKey): the key, the
// methods allowed in its place, and either {alg, thumbprint} or "bad-key".
func TestKeysVectors(t *testing.T) {
	f := readVectors(t, "keys.json")
	for _, raw := range f.Cases {
		var c struct {
			Name     string          `json:"name"`
			Key      json.RawMessage `json:"key"`
			Allowed  []string        `json:"allowed"`
			Expected expected        `json:"expected"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatal(err)
		}
		t.Run(c.Name, func(t *testing.T) {
			k, err := CheckKey(jsonValue(t, c.Key), c.Allowed...)
			if c.Expected.Refused != nil {
				if got := problem.Code(err); got != c.Expected.Refused.Code {
					t.Fatalf("code %q (%v), want %q (%s)", got, err, c.Expected.Refused.Code, c.Expected.Refused.Message)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			var want struct{ Alg, Thumbprint string }
			if err := json.Unmarshal(c.Expected.OK, &want); err != nil {
				t.Fatal(err)
			}
			if k.Alg != want.Alg || k.Thumbprint != want.Thumbprint {
				t.Fatalf("got %s %s, want %s %s", k.Alg, k.Thumbprint, want.Alg, want.Thumbprint)
			}
		})
	}
}

// TestThumbprintKnownAnswer is the digest's worked RFC 7638 example.
func TestThumbprintKnownAnswer(t *testing.T) {
	k, err := CheckKey(map[string]any{"alg": "Ed25519", "crv": "Ed25519", "kty": "OKP", "x": "fHIv_3yk625LVzyIT5i9UwfBCZUotb2M2jTGN-zaLxY"}, Ed25519)
	if err != nil {
		t.Fatal(err)
	}
	if want := "IR6uui9lUFarKmI_RtXoFjk0JkzsQ7opJDosL-11pmw"; k.Thumbprint != want {
		t.Fatalf("thumbprint %s, want %s", k.Thumbprint, want)
	}
}

func TestCheckKeyRefusals(t *testing.T) {
	good := map[string]any{"alg": "Ed25519", "crv": "Ed25519", "kty": "OKP", "x": "fHIv_3yk625LVzyIT5i9UwfBCZUotb2M2jTGN-zaLxY"}
	tests := []struct {
		name    string
		v       any
		allowed []string
	}{
		{"no method allowed", good, nil},
		{"a typed nil map", map[string]any(nil), []string{Ed25519}},
		{"an alg that is not text", map[string]any{"alg": int64(1), "crv": "Ed25519", "kty": "OKP", "x": "a"}, []string{Ed25519}},
		{"a member missing and another added", map[string]any{"alg": "Ed25519", "crv": "Ed25519", "kty": "OKP", "y": "a"}, []string{Ed25519}},
		{"an unknown method listed as allowed", map[string]any{"alg": "EdDSA", "crv": "Ed25519", "kty": "OKP", "x": "a"}, []string{"EdDSA"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CheckKey(tc.v, tc.allowed...)
			if problem.Code(err) != CodeBadKey {
				t.Fatalf("got %v, want bad-key", err)
			}
		})
	}
}
