package e2e_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/binary"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/sidecar/page"
)

// These tests drive `mcp-executor page` as a real process over HTTP, as
// anything else that reaches its port could (in a pod, the agent's
// container): no browser, no authenticator, a key of its own, its own
// Origin header and CSRF cookie. A software passkey stands in for the
// person's where only the bytes matter (the browser's path is
// TestPersonsPageWithTheExecutor).

// softPasskey is an ES256 key answering as navigator.credentials.create
// and .get would on origin.
type softPasskey struct {
	key    *ecdsa.PrivateKey
	id     []byte
	origin string
	count  uint32
}

func newSoftPasskey(t *testing.T, origin string) *softPasskey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	id := make([]byte, 16)
	rand.Read(id)
	return &softPasskey{key: k, id: id, origin: origin}
}

func (p *softPasskey) authData(flags byte, extra []byte) []byte {
	h := sha256.Sum256([]byte("localhost"))
	p.count++
	out := append(h[:], flags)
	out = binary.BigEndian.AppendUint32(out, p.count)
	return append(out, extra...)
}

func (p *softPasskey) clientData(typ string, challenge []byte) []byte {
	return []byte(`{"type":"` + typ + `","challenge":"` + canon.B64(challenge) + `","origin":"` + p.origin + `","crossOrigin":false}`)
}

// register answers a registration challenge: the flags user present,
// user verified and attested credential set, as the forger sets
// them by hand.
func (p *softPasskey) register(challenge []byte) page.Registration {
	spki, _ := x509.MarshalPKIXPublicKey(&p.key.PublicKey)
	ad := p.authData(0x45, append(make([]byte, 16), 0, 16))
	return page.Registration{CredentialID: canon.B64(p.id), ClientDataJSON: canon.B64(p.clientData("webauthn.create", challenge)),
		AuthenticatorData: canon.B64(ad), PublicKey: canon.B64(spki), Algorithm: -7}
}

func (p *softPasskey) assert(challenge []byte) page.Assertion {
	ad := p.authData(0x05, nil)
	cd := p.clientData("webauthn.get", challenge)
	ch := sha256.Sum256(cd)
	sum := sha256.Sum256(append(append([]byte{}, ad...), ch[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, p.key, sum[:])
	if err != nil {
		panic(err)
	}
	return page.Assertion{AuthenticatorData: canon.B64(ad), ClientDataJSON: canon.B64(cd), Signature: canon.B64(sig)}
}

// session is one reader of the page: the CSRF cookie and token it took
// from GET /, as anything that reaches the port can take them.
type session struct {
	t      *testing.T
	origin string
	http   *http.Client
	token  string
	cookie *http.Cookie
}

var csrfMeta = regexp.MustCompile(`<meta name="csrf-token" content="([A-Za-z0-9_-]+)">`)

func newSession(t *testing.T, origin string) *session {
	t.Helper()
	u, err := url.Parse(origin)
	if err != nil {
		t.Fatal(err)
	}
	// localhost may resolve to ::1 first, where another program may hold
	// the same port: reach 127.0.0.1, where the page listens.
	addr := "127.0.0.1:" + u.Port()
	s := &session{t: t, origin: origin, http: &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", addr)
	}}}}
	resp, err := s.http.Get(origin + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	m := csrfMeta.FindSubmatch(body)
	if m == nil || len(resp.Cookies()) != 1 {
		t.Fatalf("the page gave no CSRF token: %s", body)
	}
	s.token, s.cookie = string(m[1]), resp.Cookies()[0]
	return s
}

// post sends body as the page's script would, with the session's Origin,
// cookie and token.
func (s *session) post(path string, body any) (int, map[string]any) {
	s.t.Helper()
	data, err := json.Marshal(body)
	if err != nil {
		s.t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", s.origin+path, bytes.NewReader(data))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", s.origin)
	req.Header.Set("X-CSRF-Token", s.token)
	req.AddCookie(s.cookie)
	resp, err := s.http.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if json.Unmarshal(raw, &out) != nil {
		out = map[string]any{"error": strings.TrimSpace(string(raw))}
	}
	return resp.StatusCode, out
}

func (s *session) must(path string, body any) map[string]any {
	s.t.Helper()
	code, out := s.post(path, body)
	if code != http.StatusOK {
		s.t.Fatalf("%s: %d %v", path, code, out)
	}
	return out
}

func challengeIn(t *testing.T, out map[string]any) []byte {
	t.Helper()
	c, _ := out["challenge"].(string)
	b, err := canon.UnB64(c)
	if err != nil || len(b) != 32 {
		t.Fatalf("no challenge in %v", out)
	}
	return b
}

func errText(out map[string]any) string { s, _ := out["error"].(string); return s }

// passkeyFile is the page's passkey file now ("" when none).
func (f *folder) passkeyFile(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(f.env.Dir, page.PasskeyFile))
	if os.IsNotExist(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// otherCode is a code of the right form that is not code.
func otherCode(t *testing.T, code string) string {
	t.Helper()
	b, err := page.ParseCode(code)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 0x80
	return page.FormatCode(b)
}

// TestNoOneButThePersonRegisters is issue 28's first "Done when" through
// the binary. A process that is not the person, holding a CSRF cookie and
// token of its own and sending the page's Origin, cannot register: without
// the code, with a wrong one, with a registration it made up (flags set by
// hand, a key of its own) under a token it made up, by replaying the
// person's registration, with the code once it is spent, nor, on a page
// started again, with the code of before. The person registers with the
// code printed on the page's stderr (printed there once, and never in a
// log line); the page started again with the passkey file signs with it;
// with --new-passkey a second passkey needs the first: a new code and the
// stranger's own signature replace nothing, the person's passkey's does.
func TestNoOneButThePersonRegisters(t *testing.T) {
	t.Parallel()
	f := newFolder(t)
	pg := startPage(t, f.env.SettingsPath)
	if pg.code == "" || !strings.Contains(pg.stderr.String(), "enter it on the page to register your passkey") {
		t.Fatalf("the page printed no registration code; stderr:\n%s", pg.stderr.String())
	}
	agent := newSession(t, pg.origin)
	forger := newSoftPasskey(t, pg.origin)
	wrong := otherCode(t, pg.code)
	for name, body := range map[string]any{
		"no code":                     map[string]any{},
		"a wrong code":                map[string]any{"code": wrong},
		"the code with a letter more": map[string]any{"code": pg.code + "A"},
	} {
		if code, out := agent.post("/api/register/begin", body); code != http.StatusForbidden || out["challenge"] != nil {
			t.Errorf("%s: %d %v", name, code, out)
		}
	}
	made := make([]byte, 32)
	rand.Read(made)
	if code, out := agent.post("/api/register/finish", map[string]any{"token": canon.NewID(), "registration": forger.register(made)}); code != http.StatusConflict {
		t.Errorf("a made-up registration: %d %v", code, out)
	}
	if f.passkeyFile(t) != "" {
		t.Fatal("a passkey was registered without the code")
	}

	// The person: the code as printed.
	person := newSession(t, pg.origin)
	pk := newSoftPasskey(t, pg.origin)
	b := person.must("/api/register/begin", map[string]any{"code": pg.code})
	finish := map[string]any{"token": b["token"], "registration": pk.register(challengeIn(t, b))}
	reg := person.must("/api/register/finish", finish)
	thumbprint, _ := reg["thumbprint"].(string)
	stored := f.passkeyFile(t)
	if !strings.Contains(stored, thumbprint) || !canon.IsFingerprint(thumbprint) {
		t.Fatalf("registered %v; the file holds %s", reg, stored)
	}
	// Its registration replayed, by the agent or the person: the
	// challenge was used.
	for _, s := range []*session{agent, person} {
		if code, out := s.post("/api/register/finish", finish); code != http.StatusConflict {
			t.Errorf("the person's registration replayed: %d %v", code, out)
		}
	}
	// The spent code starts nothing, not even a replacement.
	if code, out := agent.post("/api/register/begin", map[string]any{"code": pg.code}); code != http.StatusGone {
		t.Errorf("the spent code: %d %v", code, out)
	}
	if f.passkeyFile(t) != stored {
		t.Fatal("the passkey file changed")
	}
	logs := pg.stderr.String()
	if n := strings.Count(logs, pg.code); n != 1 {
		t.Errorf("the code is on the page's stderr %d times, want once (the line for the person):\n%s", n, logs)
	}
	if strings.Contains(logs, wrong) || strings.Count(logs, `"msg":"page: a wrong registration code"`) != 3 {
		t.Errorf("the log of the wrong codes:\n%s", logs)
	}
	for _, line := range strings.Split(logs, "\n") {
		if strings.HasPrefix(line, "{") && strings.Contains(line, pg.code) {
			t.Errorf("a log line holds the code: %s", line)
		}
	}
	pg.stop()

	// 2. The page started again finds the passkey: it prints no code, the
	// old code is none, and the registered passkey signs a slip.
	f.trust(t, []string{thumbprint})
	// On the same port: the passkey is the page's at that origin.
	again := "127.0.0.1:" + strings.TrimPrefix(pg.origin, "http://localhost:")
	pg2 := startPage(t, f.env.SettingsPath, "--listen", again)
	if pg2.code != "" || strings.Contains(pg2.stderr.String(), "registration code") {
		t.Fatalf("a page with a passkey printed a code:\n%s", pg2.stderr.String())
	}
	agent = newSession(t, pg2.origin)
	if code, out := agent.post("/api/register/begin", map[string]any{"code": pg.code}); code != http.StatusGone {
		t.Errorf("the code of the page before: %d %v", code, out)
	}
	person = newSession(t, pg2.origin)
	signSlip(t, f, person, pk)
	pg2.stop()

	// 3. --new-passkey: a code for a replacement. Even with that code, the
	// stranger's key replaces nothing: the registered passkey must sign
	// the new key's thumbprint.
	pg3 := startPage(t, f.env.SettingsPath, "--new-passkey", "--listen", again)
	if pg3.code == "" || !strings.Contains(pg3.stderr.String(), "replace the passkey "+thumbprint) {
		t.Fatalf("--new-passkey printed no code for the replacement:\n%s", pg3.stderr.String())
	}
	agent = newSession(t, pg3.origin)
	out := replaceBegin(t, agent, pg3.code, forger)
	if code, res := agent.post("/api/sign", map[string]any{"token": out["token"], "assertion": forger.assert(challengeIn(t, out))}); code != http.StatusForbidden {
		t.Errorf("the stranger confirming its own key: %d %v", code, res)
	}
	if f.passkeyFile(t) != stored {
		t.Fatal("the stranger replaced the passkey")
	}
	person = newSession(t, pg3.origin)
	next := newSoftPasskey(t, pg3.origin)
	out = replaceBegin(t, person, pg3.code, next)
	done := person.must("/api/sign", map[string]any{"token": out["token"], "assertion": pk.assert(challengeIn(t, out))})
	if done["done"] != "replaced" || done["replaced"] != thumbprint || f.passkeyFile(t) == stored || !strings.Contains(f.passkeyFile(t), done["thumbprint"].(string)) {
		t.Fatalf("the person's replacement: %v", done)
	}
}

// replaceBegin starts a replacement with code, the new passkey made by
// newPK: the answer is the challenge the registered passkey must sign.
func replaceBegin(t *testing.T, s *session, code string, newPK *softPasskey) map[string]any {
	t.Helper()
	b := s.must("/api/register/begin", map[string]any{"code": code})
	out := s.must("/api/register/finish", map[string]any{"token": b["token"], "registration": newPK.register(challengeIn(t, b))})
	if out["confirm"] != true {
		t.Fatalf("a replacement was stored without the registered passkey: %v", out)
	}
	return out
}

// signSlip has pk sign a slip on the page, from what `keys --json` prints.
func signSlip(t *testing.T, f *folder, s *session, pk *softPasskey) {
	t.Helper()
	permission, err := exec.Command(executorBin, "keys", "--config", f.env.SettingsPath, "--json").Output()
	if err != nil {
		t.Fatalf("keys --json: %v", err)
	}
	now := time.Now().UTC()
	prep := s.must("/api/slip/prepare", page.SlipChoices{Permission: json.RawMessage(bytes.TrimSpace(permission)), IssuerName: "Sam", AgentName: "Agent",
		Actions: []string{"supplies.list"}, ValidFrom: canon.FormatTime(now.Add(-time.Hour)), ValidUntil: canon.FormatTime(now.Add(24 * time.Hour)),
		Purpose: "List supplies."})
	done := s.must("/api/sign", map[string]any{"token": prep["token"], "assertion": pk.assert(challengeIn(t, prep))})
	if done["done"] != "signed" {
		t.Fatalf("the slip: %v", done)
	}
	if _, err := os.Stat(f.env.SlipPath); err != nil {
		t.Fatalf("no slip saved: %v", err)
	}
}

// TestCodeBruteForceThroughTheBinary: wrong codes sent at once from many
// connections are checked five in a minute; then every attempt, the right
// code's too, is refused unchecked (429) and unlogged. A code given a
// second to live (--code-ttl 1s) starts nothing after it.
func TestCodeBruteForceThroughTheBinary(t *testing.T) {
	t.Parallel()
	f := newFolder(t)
	pg := startPage(t, f.env.SettingsPath)
	agent := newSession(t, pg.origin)
	var mu sync.Mutex
	counts := map[int]int{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 10 {
				guess := make([]byte, page.CodeBytes)
				rand.Read(guess)
				code, out := agent.post("/api/register/begin", map[string]any{"code": page.FormatCode(guess)})
				if out["challenge"] != nil {
					t.Errorf("a guess got a challenge: %v", out)
				}
				mu.Lock()
				counts[code]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if counts[http.StatusForbidden] != 5 || counts[http.StatusTooManyRequests] != 75 {
		t.Fatalf("80 guesses answered %v: want 5 checked (403) and 75 refused unchecked (429)", counts)
	}
	if code, out := agent.post("/api/register/begin", map[string]any{"code": pg.code}); code != http.StatusTooManyRequests {
		t.Errorf("the right code within the minute: %d %v", code, out)
	}
	if n := strings.Count(pg.stderr.String(), "a wrong registration code"); n != 5 {
		t.Errorf("%d wrong codes logged, want the 5 checked", n)
	}
	if f.passkeyFile(t) != "" {
		t.Fatal("a guess registered a passkey")
	}

	g := newFolder(t)
	short := startPage(t, g.env.SettingsPath, "--code-ttl", "1s")
	time.Sleep(1500 * time.Millisecond)
	s := newSession(t, short.origin)
	if code, out := s.post("/api/register/begin", map[string]any{"code": short.code}); code != http.StatusGone || !strings.Contains(errText(out), "expired") {
		t.Errorf("a code past its time: %d %v", code, out)
	}
}
