package page

import (
	"bytes"
	"crypto/sha256"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
)

// passkeyFile is the page's passkey file as it is now ("" when none).
func (f *fixture) passkeyFile() string {
	f.t.Helper()
	data, err := os.ReadFile(filepath.Join(f.dir, PasskeyFile))
	if os.IsNotExist(err) {
		return ""
	}
	if err != nil {
		f.t.Fatal(err)
	}
	return string(data)
}

// begin posts a registration code to /api/register/begin.
func (c *client) begin(code string) (int, map[string]any) {
	c.f.t.Helper()
	return c.post("/api/register/begin", map[string]any{"code": code})
}

// errorOf is the error text of an answer.
func errorOf(out map[string]any) string { s, _ := out["error"].(string); return s }

// wrongCode is a code of the right form that the page did not issue (one
// bit of the page's code changed).
func wrongCode(t *testing.T, code string) string {
	t.Helper()
	b, err := ParseCode(code)
	if err != nil {
		t.Fatal(err)
	}
	b[0] ^= 1
	return FormatCode(b)
}

// TestRegistrationNeedsTheCode is the hole of issue 28 as the agent would
// use it: with a CSRF cookie of its own from GET /, its own Origin header
// and a key of its own, it cannot get a registration challenge without the
// code, and a registration made up without a challenge is no registration.
// The person's code, as typed (lower case, spaces), registers the passkey.
// Neither the code nor the wrong ones are in the page's log.
func TestRegistrationNeedsTheCode(t *testing.T) {
	f := newFixture(t)
	agent := f.client()
	wrong := wrongCode(t, f.code)
	lookAlike := strings.Replace(f.code, string(f.code[0]), "\u0410", 1) // a Cyrillic A where the code has a letter
	cases := []struct {
		name string
		body map[string]any
		code int
	}{
		{"no code", map[string]any{}, http.StatusForbidden},
		{"an empty code", map[string]any{"code": ""}, http.StatusForbidden},
		{"a wrong code", map[string]any{"code": wrong}, http.StatusForbidden},
		{"the code cut short", map[string]any{"code": f.code[:len(f.code)-1]}, http.StatusForbidden},
		{"the code and a letter more", map[string]any{"code": f.code + "A"}, http.StatusForbidden},
		{"a look-alike letter", map[string]any{"code": lookAlike}, http.StatusForbidden},
		{"the code as a number", map[string]any{"code": 12345}, http.StatusBadRequest},
		{"the code named twice", nil, http.StatusBadRequest},
		{"the code under another case", map[string]any{"Code": f.code}, http.StatusBadRequest},
	}
	for _, tc := range cases {
		var code int
		var out map[string]any
		if tc.body == nil {
			code, out = agent.postRaw("/api/register/begin", `{"code":"`+wrong+`","code":"`+f.code+`"}`)
		} else {
			code, out = agent.post("/api/register/begin", tc.body)
		}
		if code != tc.code || out["challenge"] != nil {
			t.Errorf("%s: %d %v, want %d and no challenge", tc.name, code, out, tc.code)
		}
		f.clock.advance(time.Minute) // past the rate limit
	}
	// A registration the agent makes up, with a token and a challenge of
	// its own: no such challenge was given.
	forger := newSoftPasskey(t, f.origin, "localhost")
	made := make([]byte, 32)
	if code, out := agent.post("/api/register/finish", map[string]any{"token": canon.NewID(), "registration": forger.register(made)}); code != http.StatusConflict {
		t.Errorf("a made-up registration: %d %v", code, out)
	}
	if f.passkeyFile() != "" {
		t.Fatal("a passkey was registered without the code")
	}
	// The person types the code as they read it.
	typed := strings.ToLower(strings.ReplaceAll(f.code, "-", " "))
	b := agent.must("/api/register/begin", map[string]any{"code": typed})
	pk := newSoftPasskey(t, f.origin, "localhost")
	reg := agent.must("/api/register/finish", map[string]any{"token": b["token"], "registration": pk.register(challengeOf(t, b))})
	if !strings.Contains(f.passkeyFile(), reg["thumbprint"].(string)) {
		t.Fatalf("the person's passkey is not the one in the file: %v", reg)
	}
	for _, secret := range []string{f.code, wrong, typed, strings.ReplaceAll(f.code, "-", "")} {
		if f.pageLog.count(secret) != 0 {
			t.Errorf("the page's log holds a code: %s", secret)
		}
	}
	if n := f.pageLog.count("a wrong registration code"); n != 6 {
		t.Errorf("the log names %d wrong codes, want 6", n)
	}
}

// TestCodeAttemptsAreLimited: after five wrong codes in a minute, no code
// is checked, the right one neither (429), until the minute has passed;
// twenty wrong codes in all void the code, and the log says so.
func TestCodeAttemptsAreLimited(t *testing.T) {
	f := newFixture(t)
	c := f.client()
	wrong := wrongCode(t, f.code)
	for i := range codeWrongPerMinute {
		if code, out := c.begin(wrong); code != http.StatusForbidden {
			t.Fatalf("wrong code %d: %d %v", i+1, code, out)
		}
	}
	if code, out := c.begin(f.code); code != http.StatusTooManyRequests || out["challenge"] != nil {
		t.Fatalf("the right code beyond the limit: %d %v", code, out)
	}
	f.clock.advance(59 * time.Second)
	if code, _ := c.begin(f.code); code != http.StatusTooManyRequests {
		t.Fatalf("the right code 59 s later: %d", code)
	}
	f.clock.advance(2 * time.Second)
	if code, out := c.begin(f.code); code != http.StatusOK {
		t.Fatalf("the right code a minute later: %d %v", code, out)
	}
	// 15 more wrong codes, at four a minute (under the limit), void it.
	for i := codeWrongPerMinute; i < codeWrongMax; i++ {
		f.clock.advance(15 * time.Second)
		if code, out := c.begin(wrong); code != http.StatusForbidden {
			t.Fatalf("wrong code %d: %d %v", i+1, code, out)
		}
	}
	f.clock.advance(time.Minute)
	code, out := c.begin(f.code)
	if code != http.StatusGone || !strings.Contains(errorOf(out), "void") {
		t.Fatalf("the right code after %d wrong ones: %d %v", codeWrongMax, code, out)
	}
	if f.pageLog.count("the registration code is void") != 1 {
		t.Error("the log does not say the code was voided")
	}
	if st := f.state(); st.CodePending {
		t.Error("the state shows a void code as pending")
	}
	if f.passkeyFile() != "" {
		t.Fatal("a passkey was registered")
	}
}

// TestCodeExpires: a code starts no registration after its time.
func TestCodeExpires(t *testing.T) {
	f := newFixture(t)
	c := f.client()
	if st := f.state(); !st.CodePending || st.CodeExpiresAt == "" {
		t.Fatalf("the state before: %+v", st)
	}
	f.clock.advance(DefaultCodeTTL + time.Second)
	if code, out := c.begin(f.code); code != http.StatusGone || !strings.Contains(errorOf(out), "expired") {
		t.Fatalf("an expired code: %d %v", code, out)
	}
	if f.state().CodePending {
		t.Error("the state shows an expired code as pending")
	}
}

// TestCodeIsSpentOnce: a code registers one passkey. Removing the passkey
// file (the executor's side) does not make the spent code work again; a
// registration begun with it before it was spent is refused at its end;
// the person's registration posted again is refused, its challenge used.
func TestCodeIsSpentOnce(t *testing.T) {
	f := newFixture(t)
	c := f.client()
	b1 := c.must("/api/register/begin", map[string]any{"code": f.code})
	b2 := c.must("/api/register/begin", map[string]any{"code": f.code})
	pk := newSoftPasskey(t, f.origin, "localhost")
	first := map[string]any{"token": b1["token"], "registration": pk.register(challengeOf(t, b1))}
	c.must("/api/register/finish", first)
	stored := f.passkeyFile()
	other := newSoftPasskey(t, f.origin, "localhost")
	if code, out := c.post("/api/register/finish", map[string]any{"token": b2["token"], "registration": other.register(challengeOf(t, b2))}); code != http.StatusConflict {
		t.Errorf("a second registration begun with the same code: %d %v", code, out)
	}
	if code, out := c.post("/api/register/finish", first); code != http.StatusConflict {
		t.Errorf("the person's registration again: %d %v", code, out)
	}
	if f.passkeyFile() != stored {
		t.Fatal("the passkey file changed")
	}
	if err := os.Remove(filepath.Join(f.dir, PasskeyFile)); err != nil {
		t.Fatal(err)
	}
	if code, out := c.begin(f.code); code != http.StatusGone || !strings.Contains(errorOf(out), "was used") {
		t.Errorf("the spent code after the passkey file was removed: %d %v", code, out)
	}
	// A new code (the page started again) registers again.
	code2, _, err := f.srv.IssueCode(0)
	if err != nil {
		t.Fatal(err)
	}
	b := c.must("/api/register/begin", map[string]any{"code": code2})
	c.must("/api/register/finish", map[string]any{"token": b["token"], "registration": other.register(challengeOf(t, b))})
}

// replaceBegin starts a replacement with code and has newPK create the
// new passkey: the page's answer is the challenge the registered passkey
// must sign.
func (f *fixture) replaceBegin(c *client, code string, newPK *softPasskey) map[string]any {
	f.t.Helper()
	b := c.must("/api/register/begin", map[string]any{"code": code})
	if b["kind"] != "replace" {
		f.t.Fatalf("begin with a passkey registered: %v", b)
	}
	out := c.must("/api/register/finish", map[string]any{"token": b["token"], "registration": newPK.register(challengeOf(f.t, b))})
	if out["confirm"] != true {
		f.t.Fatalf("a replacement was stored without the registered passkey: %v", out)
	}
	return out
}

// TestReplacingNeedsTheRegisteredPasskey: with a passkey registered, a
// new code alone replaces nothing: the registered passkey must sign the new
// key's thumbprint. Another key's signature, the registered passkey's
// signature over another challenge, or over the thumbprint of another
// new key, replace nothing; the registered passkey's signature does, the
// code is then spent, and the old passkey signs nothing more on the page.
func TestReplacingNeedsTheRegisteredPasskey(t *testing.T) {
	f := newFixture(t)
	c, pk := f.signedIn()
	stored := f.passkeyFile()
	if code, out := c.begin(f.code); code != http.StatusGone {
		t.Fatalf("a replacement with the spent code: %d %v", code, out)
	}
	code2, _, err := f.srv.IssueCode(0)
	if err != nil {
		t.Fatal(err)
	}
	newPK := newSoftPasskey(t, f.origin, "localhost")
	stranger := newSoftPasskey(t, f.origin, "localhost")
	hostile := map[string]func(out map[string]any) Assertion{
		"another key signs": func(out map[string]any) Assertion { return stranger.assert(challengeOf(t, out)) },
		"the new key signs": func(out map[string]any) Assertion { return newPK.assert(challengeOf(t, out)) },
		"the registered passkey over another challenge": func(out map[string]any) Assertion {
			ch := challengeOf(t, out)
			ch[0] ^= 1
			return pk.assert(ch)
		},
		"the registered passkey over a stranger's thumbprint": func(out map[string]any) Assertion {
			return pk.assert(sum256(ReplaceSigningInput(pk.thumbprint(t), stranger.thumbprint(t), make([]byte, 16))))
		},
		"the registered passkey on another page": func(out map[string]any) Assertion {
			elsewhere := *pk
			elsewhere.origin = "http://localhost:1"
			return elsewhere.assert(challengeOf(t, out))
		},
	}
	for name, sign := range hostile {
		out := f.replaceBegin(c, code2, newPK)
		if code, res := c.post("/api/sign", map[string]any{"token": out["token"], "assertion": sign(out)}); code != http.StatusForbidden {
			t.Errorf("%s: %d %v", name, code, res)
		}
		if f.passkeyFile() != stored {
			t.Fatalf("%s: the passkey was replaced", name)
		}
	}
	out := f.replaceBegin(c, code2, newPK)
	if out["credentialId"] != canon.B64(pk.id) || out["thumbprint"] != newPK.thumbprint(t) || out["replaces"] != pk.thumbprint(t) {
		t.Fatalf("the confirmation asks for %v", out)
	}
	done := c.must("/api/sign", map[string]any{"token": out["token"], "assertion": pk.assert(challengeOf(t, out))})
	if done["done"] != "replaced" || done["thumbprint"] != newPK.thumbprint(t) || done["warning"] == nil {
		t.Fatalf("the replacement: %v", done)
	}
	if !strings.Contains(f.passkeyFile(), newPK.thumbprint(t)) {
		t.Fatal("the file does not hold the new passkey")
	}
	if code, _ := c.begin(code2); code != http.StatusGone {
		t.Errorf("the code after the replacement: %d", code)
	}
	// The old passkey signs no slip on the page any more; the new one does.
	prep := c.must("/api/slip/prepare", f.choices())
	if code, _ := c.post("/api/sign", map[string]any{"token": prep["token"], "assertion": pk.assert(challengeOf(t, prep))}); code != http.StatusForbidden {
		t.Errorf("the replaced passkey signed a slip: %d", code)
	}
	prep = c.must("/api/slip/prepare", f.choices())
	c.must("/api/sign", map[string]any{"token": prep["token"], "assertion": newPK.assert(challengeOf(t, prep))})
	if f.pageLog.count("the passkey was replaced") != 1 {
		t.Error("the log does not say the passkey was replaced")
	}
}

// TestAPageStartedWithAPasskeyFile: a page started where a passkey file is
// already (its format is the one of before registration codes) reads it
// and issues no code by itself: the command issues one only when no
// passkey is registered, or when told to (--new-passkey).
func TestAPageStartedWithAPasskeyFile(t *testing.T) {
	f := newFixture(t)
	pk := newSoftPasskey(t, f.origin, "localhost")
	c := f.client()
	b := c.must("/api/register/begin", map[string]any{"code": f.code})
	c.must("/api/register/finish", map[string]any{"token": b["token"], "registration": pk.register(challengeOf(t, b))})
	srv, err := New(Options{ConfigPath: f.config, Origin: f.origin})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := srv.Registered()
	if err != nil || reg == nil || reg.Thumbprint != pk.thumbprint(t) {
		t.Fatalf("a new page reads the passkey file as %+v %v", reg, err)
	}
	if ok, _ := srv.code.pendingCode(time.Now()); ok {
		t.Fatal("a page issued a code by itself")
	}
}

func sum256(b []byte) []byte { s := sha256.Sum256(b); return s[:] }

// postRaw posts body as it is.
func (c *client) postRaw(path, body string) (int, map[string]any) {
	c.f.t.Helper()
	return c.post(path, nil, func(r *http.Request) {
		r.Body = io.NopCloser(strings.NewReader(body))
		r.ContentLength = int64(len(body))
	})
}

// TestCodeText: the code's text reads back as its bytes, in every
// spelling a person may type, and nothing else reads as a code.
func TestCodeText(t *testing.T) {
	b := bytes.Repeat([]byte{0xA5}, CodeBytes)
	text := FormatCode(b)
	if len(text) != 39 || strings.Count(text, "-") != 7 {
		t.Fatalf("the code's text %q", text)
	}
	for _, typed := range []string{text, strings.ToLower(text), strings.ReplaceAll(text, "-", ""), strings.ReplaceAll(text, "-", " "), " " + text + " "} {
		got, err := ParseCode(typed)
		if err != nil || !bytes.Equal(got, b) {
			t.Errorf("%q: %x %v", typed, got, err)
		}
	}
	for _, bad := range []string{"", text[:38], text + "A", "0" + text[1:], "1" + text[1:], strings.Replace(text, "-", "_", 1),
		strings.Replace(text, "-", "\t", 1), strings.Repeat("A", 200), strings.Replace(text, string(text[0]), "\u0410", 1)} {
		if _, err := ParseCode(bad); err == nil {
			t.Errorf("%q read as a code", bad)
		} else if len(bad) > 0 && strings.Contains(err.Error(), bad) {
			t.Errorf("the error repeats what was typed: %v", err)
		}
	}
}

// FuzzParseCode: any text either is refused or reads as exactly CodeBytes
// bytes whose own text, without hyphens, is the text typed without
// hyphens or spaces, in upper case (one code, one spelling).
func FuzzParseCode(f *testing.F) {
	f.Add(FormatCode(make([]byte, CodeBytes)))
	f.Add("abcd efgh ijkl mnop qrst uvwx yz23 4567")
	f.Add("")
	f.Add("\u0410BCD-EFGH-IJKL-MNOP-QRST-UVWX-YZ23-4567")
	f.Fuzz(func(t *testing.T, text string) {
		b, err := ParseCode(text)
		if err != nil {
			return
		}
		if len(b) != CodeBytes {
			t.Fatalf("%q read as %d bytes", text, len(b))
		}
		norm := strings.ToUpper(strings.NewReplacer("-", "", " ", "").Replace(text))
		if strings.ReplaceAll(FormatCode(b), "-", "") != norm {
			t.Fatalf("%q read as the code %s", text, FormatCode(b))
		}
	})
}

// FuzzCodeCheck: no text but the code's own spellings gets past the
// check of the code in force.
func FuzzCodeCheck(f *testing.F) {
	var g codeGate
	now := time.Now()
	code, _, err := g.issue(now, time.Hour)
	if err != nil {
		f.Fatal(err)
	}
	want, err := ParseCode(code)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(code)
	f.Add(strings.ToLower(code))
	near := append([]byte(nil), want...)
	near[0] ^= 1
	f.Add(FormatCode(near))
	f.Add("")
	f.Fuzz(func(t *testing.T, text string) {
		g.mu.Lock()
		g.recent, g.wrong, g.void = nil, 0, false // every input is checked
		g.mu.Unlock()
		gen, _, err := g.check(text, now)
		if err != nil {
			return
		}
		if b, perr := ParseCode(text); perr != nil || !bytes.Equal(b, want) || gen == 0 {
			t.Fatalf("%q passed the check of the code %s", text, code)
		}
	})
}
