package slip

import (
	"crypto/sha256"
	"strings"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/passkey"
	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

var (
	testFrom  = time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	testUntil = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
)

// agentKeys is a real agent key set (Ed25519 + ML-DSA-87) from fixed seeds.
func agentKeys(t testing.TB) jwk.KeySet {
	t.Helper()
	ed := make([]byte, 32)
	ml := make([]byte, 32)
	for i := range ed {
		ed[i], ml[i] = 7, 9
	}
	s, err := jwk.NewLocalSigner(ed, ml)
	if err != nil {
		t.Fatal(err)
	}
	return s.Keys()
}

// slipFields is a slip of the shape the executor relies on: a service that
// countersigns, limits, a condition and a prohibition.
func slipFields(t testing.TB, issuer map[string]any) map[string]any {
	ks := agentKeys(t)
	return map[string]any{
		"issuer":    issuer,
		"agent":     map[string]any{"keys": ks.Value(), "name": "Test agent"},
		"actions":   []any{"supplies.order", "provared.data.read"},
		"limits":    []any{map[string]any{"action": "supplies.order", "max": 500, "unit": "GBP"}, map[string]any{"action": "supplies.order", "count": 10, "per": 86400}},
		"requires":  []any{map[string]any{"need": "countersignature"}, map[string]any{"need": "approval", "action": "supplies.order", "above": 100, "unit": "GBP"}},
		"never":     []any{"destroys", "impersonate"},
		"with":      []any{map[string]any{"id": "executor", "keys": ks.Value(), "name": "The executor"}, map[string]any{"id": "shop", "name": "A shop"}},
		"validFrom": canon.FormatTime(testFrom), "validUntil": canon.FormatTime(testUntil),
		"purpose": "Order office supplies for the team.",
	}
}

func newDev(t testing.TB) *passkey.DevPasskey {
	t.Helper()
	d, err := passkey.NewDevPasskey("https://sign.example.org", "example.org")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestWriteSlipIsAccepted(t *testing.T) {
	d := newDev(t)
	s, err := WriteSlip(slipFields(t, d.Issuer("Sam Example")), d)
	if err != nil {
		t.Fatal(err)
	}
	_, res := Check(s.Record.Value(), Options{IssuerKeys: []string{d.Key().Thumbprint}})
	if !res.Sound() || res.IssuerKey != d.Key().Thumbprint || res.Signature.Alg != "ES256" {
		t.Fatalf("written slip not accepted: %+v", res)
	}
	if s.Issuer.Name != "Sam Example" || !s.Allows("supplies.order") || s.Allows("other") || !s.Forbids("provared.data.delete") {
		t.Errorf("slip read wrongly: %+v", s)
	}
	if len(s.Limits) != 2 || s.Limits[1].Per != 86400 || s.Limits[0].Unit != "GBP" || s.Limits[0].Value != 500 {
		t.Errorf("limits read wrongly: %+v", s.Limits)
	}
	if len(s.Requires) != 2 || s.Requires[0].Action != "" || *s.Requires[1].Above != 100 {
		t.Errorf("requires read wrongly: %+v", s.Requires)
	}
	if svc, ok := s.Service("executor"); !ok || svc.Keys == nil || !svc.Keys.Equal(agentKeys(t)) {
		t.Errorf("service read wrongly")
	}
	if svc, ok := s.Service("shop"); !ok || svc.Keys != nil {
		t.Errorf("a service without keys read wrongly")
	}
	if !s.ValidAt(testFrom) || s.ValidAt(testUntil) {
		t.Errorf("validity read wrongly")
	}
	// Not trusted: a note, no problem.
	if _, res := Check(s.Record.Value(), Options{}); len(res.Problems) != 0 || len(res.Notes) != 1 {
		t.Errorf("untrusted check: %+v", res)
	}
	// Another passkey trusted: issuer-not-expected, after a valid signature.
	if _, res := Check(s.Record.Value(), Options{IssuerKeys: []string{newDev(t).Key().Thumbprint}}); codeOf(res) != "issuer-not-expected" || res.Signature.State != StateValid {
		t.Errorf("other passkey trusted: %+v", res)
	}
}

func TestWriteSlipRefusesBadContent(t *testing.T) {
	d := newDev(t)
	f := slipFields(t, d.Issuer("Sam"))
	f["actions"] = []any{"provared.money.send"}
	if _, err := WriteSlip(f, d); problem.Code(err) != "bad-field" {
		t.Errorf("reserved action: %v", err)
	}
}

func codeOf(r Result) string {
	if len(r.Problems) == 0 {
		return ""
	}
	return r.Problems[0].Code
}

// mutate returns a copy of the record with one decoded byte of one member
// changed, the member written again in base64url.
func mutate(t *testing.T, v map[string]any, member string, at int, to byte) map[string]any {
	t.Helper()
	env := cloneValue(v).(map[string]any)
	sig := env["signatures"].([]any)[0].(map[string]any)
	var holder map[string]any
	switch member {
	case "payload":
		holder = env
	case "protected", "signature":
		holder = sig
	default:
		holder = sig["header"].(map[string]any)
	}
	b, err := canon.UnB64(holder[member].(string))
	if err != nil {
		t.Fatal(err)
	}
	b[at] = to
	holder[member] = canon.B64(b)
	return env
}

func cloneValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = cloneValue(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = cloneValue(e)
		}
		return l
	}
	return v
}

func decoded(t *testing.T, v map[string]any, member string) []byte {
	t.Helper()
	env := v
	sig := env["signatures"].([]any)[0].(map[string]any)
	var s string
	switch member {
	case "payload":
		s = env["payload"].(string)
	case "protected", "signature":
		s = sig[member].(string)
	default:
		s = sig["header"].(map[string]any)[member].(string)
	}
	b, err := canon.UnB64(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestOneByteChangeIsRefused changes one byte of every part of a written
// slip and expects the reference's code for each place.
func TestOneByteChangeIsRefused(t *testing.T) {
	d := newDev(t)
	s, err := WriteSlip(slipFields(t, d.Issuer("Sam Example")), d)
	if err != nil {
		t.Fatal(err)
	}
	v := s.Record.Value()
	opts := Options{IssuerKeys: []string{d.Key().Thumbprint}}
	check := func(name, member string, at int, to byte, want string) {
		t.Helper()
		_, res := Check(mutate(t, v, member, at, to), opts)
		got := codeOf(res)
		if got == "" || (want != "" && got != want) {
			t.Errorf("%s: byte %d of %s → %q: got %q, want %q", name, at, member, to, got, want)
		}
	}

	// The payload: a letter of the purpose (still valid content, so the
	// challenge no longer fits), and then every byte (always refused).
	payload := decoded(t, v, "payload")
	i := strings.Index(string(payload), "Order office")
	check("purpose letter", "payload", i, 'B', "passkey-challenge-mismatch")
	// Every 17th byte keeps the test quick; each check reads two ML-DSA keys.
	for at := 0; at < len(payload); at += 17 {
		check("payload", "payload", at, payload[at]^0x01, "")
	}
	// The protected header: no longer one of the known headers.
	for at := range decoded(t, v, "protected") {
		check("protected", "protected", at, decoded(t, v, "protected")[at]^0x01, "")
	}
	check("protected letter", "protected", 10, 'X', "unknown-type")

	// The authenticator data.
	ad := decoded(t, v, "authenticatorData")
	for at := 0; at < 32; at++ {
		check("rpId hash", "authenticatorData", at, ad[at]^0x01, "passkey-rpid-mismatch")
	}
	check("flags without UP", "authenticatorData", 32, 0x04, "passkey-user-not-present")
	check("flags without UV", "authenticatorData", 32, 0x01, "passkey-user-not-verified")
	check("flags with AT", "authenticatorData", 32, 0x45, "passkey-bad-data")
	check("flags with ED, no extension", "authenticatorData", 32, 0x85, "signature-invalid")
	for at := 33; at < 37; at++ {
		check("counter", "authenticatorData", at, ad[at]^0x01, "signature-invalid")
	}

	// The client data JSON.
	cd := decoded(t, v, "clientDataJSON")
	region := func(key string) (int, int) {
		start := strings.Index(string(cd), `"`+key+`":"`) + len(key) + 4
		return start, start + strings.IndexByte(string(cd[start:]), '"')
	}
	a, b := region("type")
	for at := a; at < b; at++ {
		check("type", "clientDataJSON", at, 'x', "passkey-wrong-type")
	}
	a, b = region("challenge")
	for at := a; at < b; at++ {
		to := byte('A')
		if cd[at] == 'A' {
			to = 'B'
		}
		check("challenge", "clientDataJSON", at, to, "passkey-challenge-mismatch")
	}
	a, b = region("origin")
	for at := a; at < b; at++ {
		to := byte('x')
		if cd[at] == 'x' {
			to = 'q'
		}
		check("origin", "clientDataJSON", at, to, "passkey-origin-mismatch")
	}
	for at := range cd {
		check("client data", "clientDataJSON", at, cd[at]^0x20, "")
	}
	check("cross origin", "clientDataJSON", strings.Index(string(cd), "false"), 't', "passkey-bad-data")

	// The signature: its DER layout, then a digit of s.
	sig := decoded(t, v, "signature")
	check("der tag", "signature", 0, 0x31, "passkey-bad-data")
	check("der length", "signature", 1, sig[1]+1, "passkey-bad-data")
	check("last digit of s", "signature", len(sig)-1, sig[len(sig)-1]^0x01, "signature-invalid")
	for at := range sig {
		check("signature", "signature", at, sig[at]^0x01, "")
	}
}

func TestApprovalAndCancellation(t *testing.T) {
	d := newDev(t)
	s, err := WriteSlip(slipFields(t, d.Issuer("Sam")), d)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("{}"))
	a, err := WriteApproval(ApprovalFields{
		Slip: s.Fingerprint, Action: "supplies.order", Amount: &record.Amount{Unit: "GBP", Value: 250},
		With: "shop", Details: []record.Detail{{Name: "provared.arguments", SHA256: canon.B64(sum[:])}}, When: testFrom.Add(time.Hour),
	}, d)
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyIssued(s, a.Record); err != nil {
		t.Errorf("approval not verified: %v", err)
	}
	if a.Action != "supplies.order" || a.Amount.Value != 250 || a.With != "shop" || len(a.Details) != 1 || !a.When.Equal(testFrom.Add(time.Hour)) {
		t.Errorf("approval read wrongly: %+v", a)
	}
	other := newDev(t)
	s2, err := WriteSlip(slipFields(t, other.Issuer("Someone else")), other)
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyIssued(s2, a.Record); problem.Code(err) != "signature-invalid" {
		t.Errorf("approval checked against another issuer: %v", err)
	}

	c, err := WriteCancellation(CancellationFields{Slip: s.Fingerprint, When: testFrom.Add(2 * time.Hour)}, d)
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyIssued(s, c.Record); err != nil {
		t.Errorf("cancellation not verified: %v", err)
	}
	tampered := mutate(t, c.Record.Value(), "authenticatorData", 34, 0xff)
	rc, err := ReadCancellation(tampered)
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyIssued(s, rc.Record); problem.Code(err) != "signature-invalid" {
		t.Errorf("tampered cancellation: %v", err)
	}
	// A slip read as an approval fails at the envelope.
	if _, err := ReadApproval(s.Record.Value()); problem.Code(err) != "payload-type-mismatch" {
		t.Errorf("slip read as approval: %v", err)
	}
	if _, err := PrepareApproval(ApprovalFields{Slip: s.Fingerprint, Action: "Bad", When: testFrom}); problem.Code(err) != "bad-field" {
		t.Errorf("bad approval prepared: %v", err)
	}
}
