package consent

import (
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/passkey"
	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
)

var (
	from  = time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	until = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	at    = time.Date(2026, 10, 5, 9, 0, 0, 0, time.UTC)
)

func dev(t testing.TB) *passkey.DevPasskey {
	t.Helper()
	d, err := passkey.NewDevPasskey("https://sign.example.org", "example.org")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// signedSlip is a slip asking for the person's approval of supplies.order,
// signed by d, with the executor as a countersigning service.
func signedSlip(t testing.TB, d *passkey.DevPasskey) *slip.Slip {
	t.Helper()
	seed := func(b byte) []byte {
		s := make([]byte, 32)
		for i := range s {
			s[i] = b
		}
		return s
	}
	ag, err := jwk.NewLocalSigner(seed(7), seed(9))
	if err != nil {
		t.Fatal(err)
	}
	s, err := slip.WriteSlip(map[string]any{
		"issuer":     d.Issuer("Sam Example"),
		"agent":      map[string]any{"keys": ag.Keys().Value(), "name": "Test agent"},
		"actions":    []any{"supplies.order", "supplies.list"},
		"limits":     []any{map[string]any{"action": "supplies.order", "max": 500, "unit": "GBP"}},
		"requires":   []any{map[string]any{"need": "approval", "action": "supplies.order"}},
		"validFrom":  canon.FormatTime(from),
		"validUntil": canon.FormatTime(until),
		"purpose":    "Order office supplies for the team.",
		"with":       []any{},
	}, d)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func proposal(s *slip.Slip) Proposal {
	return Proposal{Slip: s.Fingerprint, Request: slip.Request{
		Action: "supplies.order", Amount: &record.Amount{Unit: "GBP", Value: 150},
		Details: []record.Detail{{Name: "provared.tool-name", SHA256: canon.Fingerprint([]byte("order"))}},
	}}
}

// approve has d sign the prepared approval of p and returns the record.
func approve(t testing.TB, d *passkey.DevPasskey, p Proposal, when time.Time) (*slip.Prepared, map[string]any) {
	t.Helper()
	prep, err := PrepareApproval(p, when)
	if err != nil {
		t.Fatal(err)
	}
	a, err := d.Assert(prep.Challenge)
	if err != nil {
		t.Fatal(err)
	}
	v, err := slip.Assemble(prep, a)
	if err != nil {
		t.Fatal(err)
	}
	return prep, v
}

func TestApprovalAcceptedByTheCheckBeforeActing(t *testing.T) {
	d := dev(t)
	s := signedSlip(t, d)
	p := proposal(s)
	prep, v := approve(t, d, p, at)
	a, err := CheckApproval(v, s, p, at, nil)
	if err != nil {
		t.Fatalf("a fresh approval was refused: %v", err)
	}
	if back, err := ProposalOf(prep); err != nil || back.Slip != p.Slip || *back.Amount != *p.Amount || len(back.Details) != 1 {
		t.Errorf("ProposalOf: %+v %v", back, err)
	}
	if a.Record.Fingerprint != prep.Fingerprint {
		t.Errorf("fingerprint %s, prepared %s", a.Record.Fingerprint, prep.Fingerprint)
	}
	// The book's own check before acting, with the slip as the book's only
	// line, accepts the same call with this approval, and needs one without.
	line, err := book.Line{Slip: s.Record}.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	bp := book.Proposal{Slip: s.Fingerprint, Action: p.Action, Amount: &record.Amount{Unit: "GBP", Value: 150},
		Details: []record.Detail{{Name: p.Details[0].Name, SHA256: p.Details[0].SHA256}}, When: at}
	opts := book.Options{IssuerKeys: []string{d.Key().Thumbprint}}
	if dec := book.CheckBefore(append(line, '\n'), bp, opts); !OnlyApprovalMissing(dec) || dec.Reason() != "needs-approval" {
		t.Fatalf("without the approval: %+v", dec)
	}
	over := bp
	over.Amount = &record.Amount{Unit: "GBP", Value: 501}
	if dec := book.CheckBefore(append(line, '\n'), over, opts); dec.Allowed || OnlyApprovalMissing(dec) {
		t.Fatalf("over the limit and without the approval: %+v", dec)
	}
	bp.Approval = a.Record
	if dec := book.CheckBefore(append(line, '\n'), bp, opts); !dec.Allowed {
		t.Fatalf("the check before acting refused the prepared approval: %+v", dec)
	}
}

func TestCheckApprovalRefusals(t *testing.T) {
	d := dev(t)
	s := signedSlip(t, d)
	p := proposal(s)
	_, good := approve(t, d, p, at)
	goodID := good["payload"].(string)

	other := p
	other.Amount = &record.Amount{Unit: "GBP", Value: 151}
	_, forOther := approve(t, d, other, at)

	otherSlip := p
	otherSlip.Slip = canon.Fingerprint([]byte("another slip"))
	_, underOther := approve(t, d, otherSlip, at)

	noDetails := p
	noDetails.Details = nil
	_, withoutDetails := approve(t, d, noDetails, at)

	_, byStranger := approve(t, dev(t), p, at) // another passkey, same origin and rpId

	_, late := approve(t, d, p, at.Add(MaxApprovalLead+time.Second))
	_, justInTime := approve(t, d, p, at.Add(MaxApprovalLead))

	forged := copyRecord(good)
	forged["signatures"].([]any)[0].(map[string]any)["signature"] = canon.B64(make([]byte, 70))

	cases := []struct {
		name string
		v    any
		used Used
		code string
	}{
		{"another amount", forOther, nil, "approval-mismatch"},
		{"another slip", underOther, nil, "approval-mismatch"},
		{"no details where the stub has some", withoutDetails, nil, "approval-mismatch"},
		{"its id used before", good, func(string) bool { return true }, "approval-reused"},
		{"signed by another passkey", byStranger, nil, "approval-invalid"},
		{"a forged signature", forged, nil, "approval-invalid"},
		{"dated 301 s after the stub", late, nil, "approval-dated-after-stub"},
		{"dated 300 s after the stub", justInTime, nil, ""},
		{"a slip in its place", s.Record.Value(), nil, "payload-type-mismatch"},
		{"not a record", map[string]any{"payload": goodID}, nil, "bad-envelope"},
	}
	for _, c := range cases {
		_, err := CheckApproval(c.v, s, p, at, c.used)
		if got := problem.Code(err); (err == nil && c.code != "") || (err != nil && got != c.code) {
			t.Errorf("%s: code %q (%v), want %q", c.name, got, err, c.code)
		}
	}
}

func copyRecord(v map[string]any) map[string]any {
	text := canon.MustMarshal(v)
	out, err := canon.Parse(text)
	if err != nil {
		panic(err)
	}
	return out.(map[string]any)
}

func TestCheckCancellation(t *testing.T) {
	d := dev(t)
	s := signedSlip(t, d)
	sign := func(signer *passkey.DevPasskey, slipFP string) map[string]any {
		prep, err := PrepareCancellation(slipFP, at)
		if err != nil {
			t.Fatal(err)
		}
		a, err := signer.Assert(prep.Challenge)
		if err != nil {
			t.Fatal(err)
		}
		v, err := slip.Assemble(prep, a)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	c, err := CheckCancellation(sign(d, s.Fingerprint), s)
	if err != nil || c.Slip != s.Fingerprint || !c.When.Equal(at) {
		t.Fatalf("cancellation refused or misread: %+v %v", c, err)
	}
	if _, err := CheckCancellation(sign(d, canon.Fingerprint([]byte("x"))), s); problem.Code(err) != "slip-missing" {
		t.Errorf("another slip's cancellation: %v", err)
	}
	if _, err := CheckCancellation(sign(dev(t), s.Fingerprint), s); problem.Code(err) != "cancellation-invalid" {
		t.Errorf("a stranger's cancellation: %v", err)
	}
	_, approval := approve(t, d, proposal(s), at)
	if _, err := CheckCancellation(approval, s); problem.Code(err) != "payload-type-mismatch" {
		t.Errorf("an approval read as a cancellation: %v", err)
	}
	// The book takes it as a line of its own after the slip, and the check
	// before acting then refuses the next call under the slip.
	slipLine, err := book.Line{Slip: s.Record}.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	cLine, err := book.Line{Cancellation: c.Record}.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	text := append(append(append(slipLine, '\n'), cLine...), '\n')
	dec := book.CheckBefore(text, book.Proposal{Slip: s.Fingerprint, Action: "supplies.list", When: at},
		book.Options{IssuerKeys: []string{d.Key().Thumbprint}})
	if dec.Allowed || dec.Reason() != "not-in-slip" || len(dec.Breaches) == 0 || dec.Breaches[0].Code != "after-cancellation" {
		t.Errorf("a call after the cancellation: %+v", dec)
	}
}

func TestPrepareApprovalRefusesWhatTheFormatRefuses(t *testing.T) {
	p := Proposal{Slip: canon.Fingerprint([]byte("s")), Request: slip.Request{Action: "Not An Action"}}
	if _, err := PrepareApproval(p, at); problem.Code(err) != "bad-field" {
		t.Errorf("a bad action name: %v", err)
	}
	if _, err := PrepareCancellation("short", at); problem.Code(err) != "bad-field" {
		t.Errorf("a bad slip fingerprint: %v", err)
	}
}
