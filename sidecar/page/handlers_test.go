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

	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/consent"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/sidecar/approval"
)

func TestPageHeadersAndHost(t *testing.T) {
	f := newFixture(t)
	resp, err := http.Get(f.url + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("Content-Security-Policy"); got != CSP || !strings.Contains(got, "script-src 'self'") {
		t.Errorf("CSP %q", got)
	}
	c := resp.Cookies()
	if len(c) != 1 || !c[0].HttpOnly || c[0].SameSite != http.SameSiteStrictMode {
		t.Errorf("CSRF cookie %+v", c)
	}
	// The same server under another name (DNS rebinding, or 127.0.0.1
	// instead of the origin's localhost) answers nothing.
	req, _ := http.NewRequest("GET", f.url+"/api/state", nil)
	req.Host = "evil.example:80"
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("another Host: %d", resp.StatusCode)
	}
	// The embedded page holds no inline script and no inline style.
	raw, _ := static.ReadFile("static/index.html")
	if strings.Contains(string(raw), "<script>") || strings.Contains(string(raw), "style=") || strings.Contains(string(raw), "onclick") {
		t.Error("the page has inline script or style")
	}
}

func TestBadOriginAndMissingCSRFTokenAreRefused(t *testing.T) {
	f := newFixture(t)
	c := f.client()
	cases := []struct {
		name string
		edit func(*http.Request)
		code int
	}{
		{"another origin", func(r *http.Request) { r.Header.Set("Origin", "http://evil.example") }, http.StatusForbidden},
		{"no origin", func(r *http.Request) { r.Header.Del("Origin") }, http.StatusForbidden},
		{"the origin with another port", func(r *http.Request) { r.Header.Set("Origin", "http://localhost:1") }, http.StatusForbidden},
		{"no CSRF header", func(r *http.Request) { r.Header.Del(csrfHeader) }, http.StatusForbidden},
		{"a wrong CSRF header", func(r *http.Request) { r.Header.Set(csrfHeader, strings.Repeat("A", 43)) }, http.StatusForbidden},
		{"no CSRF cookie", func(r *http.Request) { r.Header.Del("Cookie") }, http.StatusForbidden},
		{"a form post", func(r *http.Request) { r.Header.Set("Content-Type", "application/x-www-form-urlencoded") }, http.StatusUnsupportedMediaType},
	}
	for _, tc := range cases {
		code, out := c.post("/api/register/begin", map[string]any{"code": f.code}, tc.edit)
		if code != tc.code {
			t.Errorf("%s: %d %v, want %d", tc.name, code, out, tc.code)
		}
	}
	if _, err := os.Stat(filepath.Join(f.dir, PasskeyFile)); err == nil {
		t.Fatal("a refused request registered a passkey")
	}
	if code, out := c.post("/api/register/begin", map[string]any{"code": f.code}); code != http.StatusOK {
		t.Fatalf("the page's own request: %d %v", code, out)
	}
}

func TestRegistrationChecksAndIsOnce(t *testing.T) {
	f := newFixture(t)
	c := f.client()
	pk := newSoftPasskey(t, f.origin, "localhost")

	b := c.must("/api/register/begin", map[string]any{"code": f.code})
	elsewhere := newSoftPasskey(t, "http://localhost:1", "localhost")
	code, out := c.post("/api/register/finish", map[string]any{"token": b["token"], "registration": elsewhere.register(challengeOf(t, b))})
	if msg, _ := out["error"].(string); code != http.StatusBadRequest ||
		!strings.Contains(msg, `created on the page "http://localhost:1", and this page is `+f.origin) {
		t.Errorf("a passkey made on another page: %d %v", code, out)
	}
	// A refused registration does not spend the code.
	b = c.must("/api/register/begin", map[string]any{"code": f.code})
	reg := c.must("/api/register/finish", map[string]any{"token": b["token"], "registration": pk.register(challengeOf(t, b))})
	if reg["alg"] != "ES256" || !canon.IsFingerprint(reg["thumbprint"].(string)) {
		t.Errorf("registered %v", reg)
	}
	// The code is spent: it starts nothing more, not even a replacement.
	if code, out := c.post("/api/register/begin", map[string]any{"code": f.code}); code != http.StatusGone {
		t.Errorf("a second registration with the spent code: %d %v", code, out)
	}
}

func TestForgedAssertionsAreRefused(t *testing.T) {
	f := newFixture(t)
	c, pk := f.signedIn()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h, _ := f.hold(ctx, "call-1", 150, `{"item":"paper"}`)
	id := waitingID(t, c)

	stranger := newSoftPasskey(t, f.origin, "localhost")
	otherPage := newSoftPasskey(t, "http://localhost:1", "localhost")
	otherPage.key = pk.key
	forgeries := []struct {
		name string
		sign func(ch []byte) Assertion
	}{
		{"another passkey", stranger.assert},
		{"the passkey on another page", otherPage.assert},
		{"another challenge", func(ch []byte) Assertion {
			// One bit changed (setting the first byte to a constant gave the
			// same challenge when it already had that value: 1 in 256).
			other := append([]byte(nil), ch...)
			other[0] ^= 1
			return pk.assert(other)
		}},
		{"a signature changed", func(ch []byte) Assertion {
			a := pk.assert(ch)
			sig, _ := canon.UnB64(a.Signature)
			sig[len(sig)-1] ^= 1
			a.Signature = canon.B64(sig)
			return a
		}},
		{"no user verification", func(ch []byte) Assertion {
			a := pk.assert(ch)
			ad, _ := canon.UnB64(a.AuthenticatorData)
			ad[32] = 0x01
			a.AuthenticatorData = canon.B64(ad)
			return a
		}},
	}
	for _, fg := range forgeries {
		for _, decision := range []string{"approve", "decline"} {
			ch := c.must("/api/approval/prepare", map[string]any{"request": id, "decision": decision})
			if code, out := c.post("/api/sign", map[string]any{"token": ch["token"], "assertion": fg.sign(challengeOf(t, ch))}); code != http.StatusForbidden {
				t.Errorf("%s, %s: %d %v", fg.name, decision, code, out)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(f.queue, SignedName(id))); err == nil {
		t.Fatal("a forged answer was written")
	}
	// A forged answer written straight into the queue, past the page, is
	// no answer either: the executor's channel checks it.
	a := stranger.assert(make([]byte, 32))
	data, _ := json.Marshal(Signed{Request: id, Declined: &a})
	if err := approval.WriteFileAtomic(f.queue, SignedName(id), data); err != nil {
		t.Fatal(err)
	}
	f.waitFor(func() bool { return f.logs.count("a signed answer does not check") == 1 }, "the channel to read the forged answer")
	select {
	case r := <-h.result:
		t.Fatalf("a forged file answered the call: %v", r.Outcome)
	default:
	}
	os.Remove(filepath.Join(f.queue, SignedName(id)))
	ch := c.must("/api/approval/prepare", map[string]any{"request": id, "decision": "decline"})
	c.must("/api/sign", map[string]any{"token": ch["token"], "assertion": pk.assert(challengeOf(t, ch))})
	if r := <-h.result; r.Outcome != approval.Declined || r.Answer.Channel != ChannelPage {
		t.Fatalf("the true decline: %v %+v", r.Outcome, r.Answer)
	}
}

func TestReplayedApprovalIsRefused(t *testing.T) {
	f := newFixture(t)
	c, pk := f.signedIn()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	h1, prep1 := f.hold(ctx, "call-1", 150, `{"item":"paper"}`)
	id1 := waitingID(t, c)
	ch := c.must("/api/approval/prepare", map[string]any{"request": id1, "decision": "approve"})
	signed := map[string]any{"token": ch["token"], "assertion": pk.assert(challengeOf(t, ch))}
	c.must("/api/sign", signed)
	// The same signed answer again: the challenge was used.
	if code, out := c.post("/api/sign", signed); code != http.StatusConflict {
		t.Errorf("the same answer again: %d %v", code, out)
	}
	r1 := <-h1.result
	if r1.Outcome != approval.Approved || r1.Answer.Record == nil || r1.Answer.Record.Fingerprint != prep1.Fingerprint {
		t.Fatalf("the approval: %v %+v", r1.Outcome, r1.Answer)
	}

	// A second call of the same amount: the first call's approval, copied
	// into its answer file, is for another call (its executor.call detail)
	// and is not taken; the book's check refuses it again as reused.
	h2, prep2 := f.hold(ctx, "call-2", 150, `{"item":"paper"}`)
	id2 := waitingID(t, c)
	raw, _ := canon.Marshal(r1.Answer.Record.Value())
	data, _ := json.Marshal(Signed{Request: id2, Approval: raw})
	if err := approval.WriteFileAtomic(f.queue, SignedName(id2), data); err != nil {
		t.Fatal(err)
	}
	if _, err := CheckSigned(Signed{Request: id2, Approval: raw}, id2, prep2, f.currentSlip(), time.Now()); err == nil || !strings.Contains(err.Error(), "approval-mismatch") {
		t.Errorf("the first approval for the second call: %v", err)
	}
	f.waitFor(func() bool { return f.logs.count("approval-mismatch") == 1 }, "the channel to read the replayed approval")
	select {
	case r := <-h2.result:
		t.Fatalf("a replayed approval answered the call: %v", r.Outcome)
	default:
	}
	// The book's check before acting takes the approval for its own call,
	// as the engine will hand it over (docs/design/page.md).
	p1, err := consent.ProposalOf(prep1)
	if err != nil {
		t.Fatal(err)
	}
	slipLine, _ := book.Line{Slip: f.currentSlip().Record}.Bytes()
	bp := book.Proposal{Slip: p1.Slip, Action: p1.Action, Amount: &record.Amount{Unit: p1.Amount.Unit, Value: p1.Amount.Value},
		With: p1.With, Approval: r1.Answer.Record}
	for _, d := range p1.Details {
		bp.Details = append(bp.Details, record.Detail{Name: d.Name, SHA256: d.SHA256})
	}
	if dec := book.CheckBefore(append(slipLine, '\n'), bp, book.Options{IssuerKeys: f.trusted()}); !dec.Allowed {
		t.Fatalf("the check before acting refused the approval for its own call: %+v", dec)
	}
	cancel()
	<-h2.result
}

// waitingID is the one call the page lists as waiting for the passkey.
func waitingID(t *testing.T, c *client) string {
	t.Helper()
	var id string
	c.f.waitFor(func() bool {
		resp, err := http.Get(c.f.url + "/api/state")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var st State
		if json.NewDecoder(resp.Body).Decode(&st) != nil || len(st.Waiting) == 0 {
			return false
		}
		id = st.Waiting[len(st.Waiting)-1].Request
		return true
	}, "a waiting call on the page")
	return id
}

// otherToken is token with its first character changed: never token itself
// (changing the last one to a fixed letter sometimes gave token back: the
// last character of a base64url token carries only a few bits, so it is
// one of a few letters).
func otherToken(token string) string {
	if token[0] == 'A' {
		return "B" + token[1:]
	}
	return "A" + token[1:]
}

// Every POST route is behind the same guard: another origin, no origin, or
// a missing or wrong CSRF token is refused before the handler runs.
func TestEveryPostNeedsTheOriginAndTheCSRFToken(t *testing.T) {
	f := newFixture(t)
	c := f.client()
	routes := []string{"/api/register/begin", "/api/register/finish", "/api/slip/prepare", "/api/approval/prepare", "/api/cancel/prepare", "/api/sign"}
	edits := map[string]func(*http.Request){
		"another origin":    func(r *http.Request) { r.Header.Set("Origin", "http://evil.example") },
		"no origin":         func(r *http.Request) { r.Header.Del("Origin") },
		"no CSRF header":    func(r *http.Request) { r.Header.Del(csrfHeader) },
		"a wrong CSRF":      func(r *http.Request) { r.Header.Set(csrfHeader, otherToken(c.token)) },
		"no CSRF cookie":    func(r *http.Request) { r.Header.Del("Cookie") },
		"a put, not a post": func(r *http.Request) { r.Method = http.MethodPut; r.Header.Del(csrfHeader) },
	}
	for _, route := range routes {
		for name, edit := range edits {
			if code, out := c.post(route, map[string]any{}, edit); code != http.StatusForbidden {
				t.Errorf("%s, %s: %d %v, want 403", route, name, code, out)
			}
		}
	}
}

// A passkey answer posted by another page, or without the page's CSRF
// token, writes nothing: the challenge stays for the page's own post.
func TestCrossSiteAnswerWritesNothing(t *testing.T) {
	f := newFixture(t)
	c, pk := f.signedIn()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h, _ := f.hold(ctx, "call-1", 150, `{"item":"paper"}`)
	id := waitingID(t, c)
	ch := c.must("/api/approval/prepare", map[string]any{"request": id, "decision": "approve"})
	signed := map[string]any{"token": ch["token"], "assertion": pk.assert(challengeOf(t, ch))}
	for name, edit := range map[string]func(*http.Request){
		"another origin": func(r *http.Request) { r.Header.Set("Origin", "http://evil.example") },
		"no CSRF token":  func(r *http.Request) { r.Header.Del(csrfHeader); r.Header.Del("Cookie") },
	} {
		if code, out := c.post("/api/sign", signed, edit); code != http.StatusForbidden {
			t.Errorf("%s: %d %v", name, code, out)
		}
	}
	if _, err := os.Stat(filepath.Join(f.queue, SignedName(id))); err == nil {
		t.Fatal("a cross-site answer was written")
	}
	select {
	case r := <-h.result:
		t.Fatalf("a cross-site answer answered the call: %v", r.Outcome)
	default:
	}
	c.must("/api/sign", signed)
	if r := <-h.result; r.Outcome != approval.Approved || r.Answer.Channel != ChannelPage {
		t.Fatalf("the page's own answer: %v %+v", r.Outcome, r.Answer)
	}
}

// A decline signed for one call, written as the answer to another, is no
// answer: the decline's signature names the prepared approval it declines.
func TestReplayedDeclineIsRefused(t *testing.T) {
	f := newFixture(t)
	c, pk := f.signedIn()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, prep1 := f.hold(ctx, "call-1", 150, `{"item":"paper"}`)
	waitingID(t, c)
	h2, _ := f.hold(ctx, "call-2", 40, `{"item":"pens"}`)
	id2 := waitingID(t, c)
	sum := sha256.Sum256(DeclineSigningInput(prep1.Fingerprint))
	a := pk.assert(sum[:])
	data, _ := json.Marshal(Signed{Request: id2, Declined: &a})
	if err := approval.WriteFileAtomic(f.queue, SignedName(id2), data); err != nil {
		t.Fatal(err)
	}
	f.waitFor(func() bool { return f.logs.count("a signed answer does not check") == 1 }, "the channel to read the replayed decline")
	select {
	case r := <-h2.result:
		t.Fatalf("a decline of another call answered call 2: %v", r.Outcome)
	default:
	}
}
