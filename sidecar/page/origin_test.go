package page

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
)

// otherOrigin is the page a slip names in these tests, not the page's.
const otherOrigin = "http://localhost:9"

// slipForOrigin writes, as the slip in force, a slip signed by the page's
// own passkey pk but on the page at origin (as another Provared signer, or
// the page served at another port, would make it): its issuer names that
// origin.
func (f *fixture) slipForOrigin(pk *softPasskey, origin string) *slip.Slip {
	f.t.Helper()
	reg, err := loadRegistered(filepath.Join(f.dir, PasskeyFile))
	if err != nil {
		f.t.Fatal(err)
	}
	elsewhere := *pk
	elsewhere.origin = origin
	reg.Origin = origin
	fields, err := SlipFields(f.choices(), reg)
	if err != nil {
		f.t.Fatal(err)
	}
	prep, err := slip.Prepare(record.Slip, slip.SlipContent(fields))
	if err != nil {
		f.t.Fatal(err)
	}
	a, err := elsewhere.assert(prep.Challenge).Decode()
	if err != nil {
		f.t.Fatal(err)
	}
	v, err := slip.Assemble(prep, a)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(f.slip, append(canon.MustMarshal(v), '\n'), 0o600); err != nil {
		f.t.Fatal(err)
	}
	s := f.currentSlip()
	if s == nil || s.Issuer.Origin != origin {
		f.t.Fatalf("the slip for %s does not check", origin)
	}
	return s
}

// TestTheSlipNamesAnotherOrigin: when the slip in force names another
// origin than the page's, the page says which is which before offering
// anything (the state, each waiting call), prepares no approve, decline or
// cancel, and writes nothing. The executor's check of an answer made on
// the page's origin names both origins too.
func TestTheSlipNamesAnotherOrigin(t *testing.T) {
	f := newFixture(t)
	c, pk := f.signedIn()
	s := f.slipForOrigin(pk, otherOrigin)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, prep := f.hold(ctx, "call-1", 150, `{"item":"paper"}`)
	id := waitingID(t, c)

	want := "This page is " + f.origin + " (rpId localhost), and the slip in force names " + otherOrigin + " (rpId localhost)"
	st := f.state()
	if !strings.Contains(st.AnswerProblem, want) || !strings.Contains(st.AnswerProblem, "mcp-executor page --listen 127.0.0.1:9") {
		t.Errorf("the state's answer problem: %q", st.AnswerProblem)
	}
	if st.Slip == nil || st.Slip.Origin != otherOrigin || st.Slip.RPID != "localhost" {
		t.Errorf("the state's slip: %+v", st.Slip)
	}
	if len(st.Waiting) != 1 || !strings.Contains(st.Waiting[0].Problem, want) {
		t.Errorf("the waiting call: %+v", st.Waiting)
	}
	for _, decision := range []string{"approve", "decline"} {
		code, out := c.post("/api/approval/prepare", map[string]any{"request": id, "decision": decision})
		if code != http.StatusConflict || !strings.Contains(errorOf(out), want) || out["challenge"] != nil {
			t.Errorf("%s: %d %v", decision, code, out)
		}
	}
	if code, out := c.post("/api/cancel/prepare", map[string]any{}); code != http.StatusConflict || !strings.Contains(errorOf(out), want) {
		t.Errorf("cancel: %d %v", code, out)
	}
	if _, err := os.Stat(filepath.Join(f.queue, SignedName(id))); err == nil {
		t.Error("an answer was written")
	}
	if _, err := os.Stat(CancellationPath(f.slip)); err == nil {
		t.Error("a cancellation was written")
	}

	// What the executor's channel says of answers made on the page's origin
	// (the slip's passkey, the page's origin): both origins, by name.
	named := `signed on the page "` + f.origin + `", and the slip names ` + otherOrigin
	sum := sha256.Sum256(DeclineSigningInput(prep.Fingerprint))
	a := pk.assert(sum[:])
	if _, err := CheckSigned(Signed{Request: id, Declined: &a}, id, prep, s, time.Now()); err == nil || !strings.Contains(err.Error(), named) {
		t.Errorf("a decline made on the page's origin: %v", err)
	}
	pa, err := pk.assert(prep.Challenge).Decode()
	if err != nil {
		t.Fatal(err)
	}
	v, err := slip.Assemble(prep, pa)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CheckSigned(Signed{Request: id, Approval: canon.MustMarshal(v)}, id, prep, s, time.Now()); err == nil || !strings.Contains(err.Error(), named) {
		t.Errorf("an approval made on the page's origin: %v", err)
	}
}

// TestAnswersNameTheOriginsCompared: a passkey answer the page refuses for
// its origin or rpId says which it was and which the page is.
func TestAnswersNameTheOriginsCompared(t *testing.T) {
	f := newFixture(t)
	c, pk := f.signedIn()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.hold(ctx, "call-1", 150, `{"item":"paper"}`)
	id := waitingID(t, c)
	elsewhere := *pk
	elsewhere.origin = "http://localhost:1"
	otherRP := *pk
	otherRP.rpID = "example.org"
	for _, tc := range []struct {
		name string
		pk   *softPasskey
		want string
	}{
		{"another origin", &elsewhere, `answered on the page "http://localhost:1", and this page is ` + f.origin},
		{"another rpId", &otherRP, "signed for another rpId than this page's (localhost)"},
	} {
		ch := c.must("/api/approval/prepare", map[string]any{"request": id, "decision": "approve"})
		code, out := c.post("/api/sign", map[string]any{"token": ch["token"], "assertion": tc.pk.assert(challengeOf(t, ch))})
		if code != http.StatusForbidden || !strings.Contains(errorOf(out), tc.want) {
			t.Errorf("%s: %d %v", tc.name, code, out)
		}
	}
	// A passkey registered for another page: the state says so, and
	// nothing is prepared for it.
	data, err := os.ReadFile(filepath.Join(f.dir, PasskeyFile))
	if err != nil {
		t.Fatal(err)
	}
	var reg Registered
	if err := json.Unmarshal(data, &reg); err != nil {
		t.Fatal(err)
	}
	reg.Origin = "http://localhost:1"
	moved, _ := encode(reg)
	if err := os.WriteFile(filepath.Join(f.dir, PasskeyFile), moved, 0o600); err != nil {
		t.Fatal(err)
	}
	want := "The passkey was registered for http://localhost:1 (rpId localhost), and this page is " + f.origin
	if st := f.state(); !strings.Contains(st.PasskeyProblem, want) || !strings.Contains(st.AnswerProblem, want) {
		t.Errorf("the state: %q / %q", st.PasskeyProblem, st.AnswerProblem)
	}
	if code, out := c.post("/api/approval/prepare", map[string]any{"request": id, "decision": "approve"}); code != http.StatusConflict || !strings.Contains(errorOf(out), want) {
		t.Errorf("prepare with a passkey of another page: %d %v", code, out)
	}
}
