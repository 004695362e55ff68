package slip

import (
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/passkey"
	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
)

// knownCodes are the codes a slip's content or record check may give.
var knownCodes = map[string]bool{
	"bad-field": true, "bad-key": true, "cover-invalid": true, "payload-not-canonical": true,
	"bad-envelope": true, "bad-base64url": true, "too-large": true, "unknown-type": true,
	"payload-type-mismatch": true, "bad-signatures-layout": true, "signature-invalid": true,
	"passkey-bad-data": true, "passkey-wrong-type": true, "passkey-challenge-mismatch": true,
	"passkey-origin-mismatch": true, "passkey-rpid-mismatch": true, "passkey-user-not-present": true,
	"passkey-user-not-verified": true, "issuer-not-expected": true,
}

// FuzzSlipContent validates arbitrary canonical content as a slip, as an
// approval and as a cancellation, and checks it inside an envelope with
// arbitrary disclosures: never a panic, only the format's codes.
func FuzzSlipContent(f *testing.F) {
	d, err := passkey.NewDevPasskey("https://sign.example.org", "example.org")
	if err != nil {
		f.Fatal(err)
	}
	s, err := WriteSlip(slipFields(f, d.Issuer("Sam")), d)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(s.Record.ContentText), "")
	small := strings.Replace(string(s.Record.ContentText), `"purpose":"Order office supplies for the team.",`, `"_sd_alg":"sha-256","_sd":["AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"],`, 1)
	f.Add(small, "WyJzYWx0IiwicHVycG9zZSIsIngiXQ")
	f.Add(`{"action":"a","id":"AgICAgICAgICAgICAgICAg","slip":"AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE","type":"provared.approval.v0","when":"2026-10-05T09:00:00Z"}`, "")
	f.Add(`{"limits":[{"action":"a","max":1,"per":0}],"_sd":[1]}`, "x")
	f.Fuzz(func(t *testing.T, content, disclosure string) {
		v, err := canon.Parse([]byte(content))
		if err != nil {
			return
		}
		m, _ := v.(map[string]any)
		for _, validate := range []func(any) error{
			func(v any) error { _, err := readContent(v, nil, false); return err },
			ValidateApprovalValue, ValidateCancellationValue,
		} {
			if err := validate(v); err != nil && !knownCodes[problem.Code(err)] {
				t.Fatalf("code %q: %v", problem.Code(err), err)
			}
		}
		if m == nil {
			return
		}
		if _, _, _, err := uncover(m, []any{disclosure}); err != nil && problem.Code(err) != "cover-invalid" {
			t.Fatalf("uncover code %q", problem.Code(err))
		}
		p, err := Prepare("slip", m)
		if err != nil {
			return
		}
		env := passkey.Envelope(p.PayloadB64, p.ProtectedB64, passkey.Assertion{AuthenticatorData: []byte{1}, ClientDataJSON: []byte("{}"), Signature: []byte{0x30}})
		// Beside it, the same disclosure and values that are not texts.
		beside := map[string]any{p.Fingerprint: []any{disclosure, map[string]any{}, []any{}, int64(1)}}
		_, res := Check(env, Options{Attached: []any{disclosure, map[string]any{"a": disclosure}}, Disclosures: beside})
		for _, pr := range append(res.Problems, res.DisclosureProblems...) {
			if !knownCodes[pr.Code] {
				t.Fatalf("check code %q", pr.Code)
			}
		}
		if res.Sound() {
			t.Fatalf("an unsigned slip was sound")
		}
	})
}
