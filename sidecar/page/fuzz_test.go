package page

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/consent"
	"github.com/seed-6e06167c/mcp-executor/receipts/passkey"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
)

// FuzzSignedFile feeds any bytes to the reader of <id>.signed and the
// check of its answer: never a panic, and never an answer from bytes no
// passkey signed.
func FuzzSignedFile(f *testing.F) {
	d, err := passkey.NewDevPasskey("http://localhost:8443", "localhost")
	if err != nil {
		f.Fatal(err)
	}
	s, err := slip.WriteSlip(map[string]any{
		"issuer": d.Issuer("Sam"), "agent": map[string]any{"keys": testKeys(f).Value(), "name": "a"},
		"actions": []any{"supplies.order"}, "limits": []any{}, "with": []any{},
		"requires":  []any{map[string]any{"need": "approval", "action": "supplies.order"}},
		"validFrom": "2026-01-01T00:00:00Z", "validUntil": "2027-01-01T00:00:00Z", "purpose": "p",
	}, d)
	if err != nil {
		f.Fatal(err)
	}
	prep, err := consent.PrepareApproval(consent.Proposal{Slip: s.Fingerprint, Request: slip.Request{Action: "supplies.order"}}, time.Now())
	if err != nil {
		f.Fatal(err)
	}
	id := canon.NewID()
	a, _ := d.Assert(prep.Challenge)
	v, _ := slip.Assemble(prep, a)
	good, _ := json.Marshal(Signed{Request: id, Approval: canon.MustMarshal(v)})
	f.Add(good)
	f.Add([]byte(`{"request":"` + id + `","declined":{"authenticatorData":"","clientDataJSON":"","signature":""}}`))
	f.Add([]byte(`{"request":"x","approval":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var sf Signed
		if decodeStrict(data, &sf) != nil {
			return
		}
		ans, err := CheckSigned(sf, id, prep, s, time.Now())
		if err == nil && ans.Approved && ans.Record == nil {
			t.Fatal("an approval without its record")
		}
	})
}

func FuzzParseLimit(f *testing.F) {
	for _, s := range []string{"a max 5 GBP", "a count 3 per 60", "a each 1 u per 0", "", "a max -1 GBP", "a count 1 per"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		l, err := parseLimit(line)
		if err == nil && l["action"] != strings.Fields(line)[0] {
			t.Fatalf("%q read as %v", line, l)
		}
	})
}

// FuzzRegistration feeds any values to the registration check.
func FuzzRegistration(f *testing.F) {
	pk := newSoftPasskey(f, "http://localhost:8443", "localhost")
	challenge := make([]byte, 32)
	r := pk.register(challenge)
	f.Add(r.CredentialID, r.ClientDataJSON, r.AuthenticatorData, r.PublicKey, r.Algorithm)
	f.Fuzz(func(t *testing.T, id, cd, ad, key string, alg int) {
		reg, err := checkRegistration(Registration{id, cd, ad, key, alg}, challenge, "http://localhost:8443", "localhost", time.Now())
		if err == nil && (reg.Thumbprint == "" || reg.Origin != "http://localhost:8443") {
			t.Fatalf("registered %+v", reg)
		}
	})
}
