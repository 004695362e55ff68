package page

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
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/consent"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
	"github.com/seed-6e06167c/mcp-executor/sidecar/approval"
)

// fixture is a settings folder, a page server on a loopback port, and on
// the executor's side a copy, a hub with the queue and page channels — the
// hub lives in the test process because the engine's wiring of passkey
// approvals is another change (docs/design/page.md says what it calls).
type fixture struct {
	t       *testing.T
	dir     string
	config  string
	queue   string
	slip    string
	origin  string
	url     string // http://localhost:PORT
	srv     *Server
	hub     *approval.Hub
	agent   jwk.KeySet
	exec    jwk.KeySet
	logs    *logBuffer // what the executor's page channel logged
	code    string     // the registration code the page issued at start
	clock   *clock     // the page server's time
	pageLog *logBuffer // what the page server logged
	// the settings' agent.issuerKeys and agent.slip ("": slip.json), as
	// writeSettings last wrote them
	issuerKeys  []string
	slipSetting string
}

// clock is a time the test may move on; it starts at the real time.
type clock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.off += d
}

// logBuffer is a log the test can read while it grows.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) count(s string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Count(b.buf.String(), s)
}

func seed(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }

// The page's origin is http://localhost:PORT, with the server on
// 127.0.0.1:PORT. "localhost" may resolve to ::1 first, where another
// program may hold the same port number: the tests' HTTP client, and
// Chromium (--host-resolver-rules), always reach 127.0.0.1.
func init() {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	var d net.Dialer
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err == nil && host == "localhost" {
			addr = net.JoinHostPort("127.0.0.1", port)
		}
		return d.DialContext(ctx, "tcp4", addr)
	}
	http.DefaultClient.Transport = tr
	http.DefaultTransport = tr
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{t: t, dir: t.TempDir()}
	f.config = filepath.Join(f.dir, "executor.json")
	f.queue = filepath.Join(f.dir, "held")
	f.slip = filepath.Join(f.dir, "slip.json")
	ag, err := jwk.NewLocalSigner(seed(7), seed(9))
	if err != nil {
		t.Fatal(err)
	}
	ex, err := jwk.NewLocalSigner(seed(3), seed(5))
	if err != nil {
		t.Fatal(err)
	}
	f.agent, f.exec = ag.Keys(), ex.Keys()
	f.writeSettings(nil)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.origin, err = OriginFor(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	f.url = f.origin
	f.clock = &clock{}
	f.pageLog = &logBuffer{}
	f.srv, err = New(Options{ConfigPath: f.config, Origin: f.origin, Now: f.clock.now,
		Logger: slog.New(slog.NewJSONHandler(f.pageLog, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if f.code, _, err = f.srv.IssueCode(0); err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: f.srv.Handler()}
	go func() {
		if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("the page's server stopped: %v", err)
		}
	}()
	t.Cleanup(func() { hs.Close() })

	lg, err := copylog.Open(filepath.Join(f.dir, "copy.jsonl"), bytes.Repeat([]byte{7}, copylog.KeySize), "page tests")
	if err != nil {
		t.Fatal(err)
	}
	q, err := approval.NewQueue(f.queue, 20*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.logs = &logBuffer{}
	ch := NewChannel(f.queue, f.currentSlip, 20*time.Millisecond, slog.New(slog.NewJSONHandler(f.logs, nil)))
	f.hub, err = approval.NewHub(approval.Options{Copy: lg, Channels: []approval.Channel{q, ch}}, lg.ApprovalLines())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.hub.Close(); lg.Close() })
	return f
}

// writeSettings writes the executor's settings, trusting issuerKeys.
func (f *fixture) writeSettings(issuerKeys []string) {
	f.t.Helper()
	f.issuerKeys = issuerKeys
	slipPath := f.slipSetting
	if slipPath == "" {
		slipPath = "slip.json"
	}
	agent := map[string]any{"slip": slipPath, "book": "book.jsonl", "keys": "agent.keys"}
	if issuerKeys != nil {
		agent["issuerKeys"] = issuerKeys
	}
	s := map[string]any{"name": "Page test executor", "server": map[string]any{"command": "/bin/true"},
		"agent":     agent,
		"executor":  map[string]any{"keys": "executor.keys", "copy": "copy.jsonl", "copyKey": "copy.key"},
		"tools":     map[string]any{"order": map[string]any{"action": "supplies.order"}, "list": map[string]any{"action": "supplies.list"}},
		"approvals": map[string]any{"queue": "held"}}
	data, _ := json.Marshal(s)
	if err := os.WriteFile(f.config, data, 0o600); err != nil {
		f.t.Fatal(err)
	}
}

// writeSettingsSlip writes the settings again with agent.slip at path.
func (f *fixture) writeSettingsSlip(path string) {
	f.t.Helper()
	f.slipSetting = path
	f.writeSettings(f.issuerKeys)
}

// permission is what `keys --json` prints for these keys.
func (f *fixture) permission() string {
	v := map[string]any{"agent": map[string]any{"keys": f.agent.Value()},
		"with":     map[string]any{"id": "executor", "name": "Page test executor", "keys": f.exec.Value()},
		"requires": []any{map[string]any{"need": "countersignature"}}}
	return string(canon.MustMarshal(v))
}

// currentSlip is the slip in force, as the executor would hold it.
func (f *fixture) currentSlip() *slip.Slip {
	data, err := os.ReadFile(f.slip)
	if err != nil {
		return nil
	}
	v, err := recordValue(data)
	if err != nil {
		return nil
	}
	s, res := slip.Check(v, slip.Options{IssuerKeys: f.trusted()})
	if !res.Sound() {
		return nil
	}
	return s
}

func (f *fixture) trusted() []string {
	reg, err := loadRegistered(filepath.Join(f.dir, PasskeyFile))
	if err != nil {
		return nil
	}
	return []string{reg.Thumbprint}
}

// held is a call held in the hub, and where its result arrives.
type held struct {
	result chan approval.Result
	err    chan error
}

// hold holds a call of tool "order" for amount GBP under the slip in
// force, with the approval prepared as the engine will (docs/design/page.md),
// and waits until its prepared file is in the queue.
func (f *fixture) hold(ctx context.Context, callID string, amount int64, args string) (*held, *slip.Prepared) {
	f.t.Helper()
	s := f.currentSlip()
	if s == nil {
		f.t.Fatal("no slip in force")
	}
	argsFP, err := canon.JCSFingerprint([]byte(args))
	if err != nil {
		f.t.Fatal(err)
	}
	p := consent.Proposal{Slip: s.Fingerprint, Request: slip.Request{Action: "supplies.order", Amount: &record.Amount{Unit: "GBP", Value: amount},
		With: "executor", Details: []record.Detail{
			{Name: "provared.arguments", SHA256: argsFP},
			{Name: "provared.tool-name", SHA256: canon.Fingerprint([]byte("order"))},
			{Name: "executor.call", SHA256: canon.Fingerprint([]byte(callID))},
		}}}
	prep, err := consent.PrepareApproval(p, time.Now())
	if err != nil {
		f.t.Fatal(err)
	}
	h := &held{result: make(chan approval.Result, 1), err: make(chan error, 1)}
	go func() {
		r, err := f.hub.Hold(ctx, approval.Call{CallID: callID, Tool: "order", Action: "supplies.order",
			Amount: &record.Amount{Unit: "GBP", Value: amount}, Slip: s.Fingerprint, Arguments: []byte(args),
			Timeout: time.Minute, Prepared: prep})
		h.result <- r
		h.err <- err
	}()
	f.waitFor(func() bool {
		m, _ := filepath.Glob(filepath.Join(f.queue, "*"+PreparedSuffix))
		for _, name := range m {
			var pf Prepared
			if readStrict(name, &pf) == nil && pf.Fingerprint == prep.Fingerprint {
				return true
			}
		}
		return false
	}, "the prepared file of call "+callID)
	return h, prep
}

// waitFor polls cond until it holds, for at most 20 seconds.
func (f *fixture) waitFor(cond func() bool, what string) {
	f.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			f.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// softPasskey is a software ES256 passkey for the handler tests (the
// browser test uses Chromium's virtual authenticator): it makes the values
// navigator.credentials.create and .get return.
type softPasskey struct {
	key    *ecdsa.PrivateKey
	id     []byte
	origin string
	rpID   string
	count  uint32
}

func newSoftPasskey(t testing.TB, origin, rpID string) *softPasskey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	id := make([]byte, 16)
	rand.Read(id)
	return &softPasskey{key: k, id: id, origin: origin, rpID: rpID}
}

func (p *softPasskey) authData(flags byte, extra []byte) []byte {
	h := sha256.Sum256([]byte(p.rpID))
	p.count++
	out := append(h[:], flags)
	out = binary.BigEndian.AppendUint32(out, p.count)
	return append(out, extra...)
}

func (p *softPasskey) clientData(typ string, challenge []byte) []byte {
	return []byte(`{"type":"` + typ + `","challenge":"` + canon.B64(challenge) + `","origin":"` + p.origin + `","crossOrigin":false}`)
}

// register answers a registration challenge.
func (p *softPasskey) register(challenge []byte) Registration {
	spki, _ := x509.MarshalPKIXPublicKey(&p.key.PublicKey)
	// flags UP|UV|AT, followed by stand-in attested credential data (the
	// page does not read it).
	ad := p.authData(0x45, append(make([]byte, 16), 0, 16))
	return Registration{CredentialID: canon.B64(p.id), ClientDataJSON: canon.B64(p.clientData("webauthn.create", challenge)),
		AuthenticatorData: canon.B64(ad), PublicKey: canon.B64(spki), Algorithm: coseES256}
}

// assert signs a challenge as navigator.credentials.get does.
func (p *softPasskey) assert(challenge []byte) Assertion {
	ad := p.authData(0x05, nil)
	cd := p.clientData("webauthn.get", challenge)
	ch := sha256.Sum256(cd)
	sum := sha256.Sum256(append(append([]byte{}, ad...), ch[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, p.key, sum[:])
	if err != nil {
		panic(err)
	}
	return Assertion{AuthenticatorData: canon.B64(ad), ClientDataJSON: canon.B64(cd), Signature: canon.B64(sig)}
}

// client is a browser session of the page: its CSRF cookie and token.
type client struct {
	f     *fixture
	token string
	jar   *http.Cookie
}

var metaToken = regexp.MustCompile(`<meta name="csrf-token" content="([A-Za-z0-9_-]+)">`)

func (f *fixture) client() *client {
	f.t.Helper()
	resp, err := http.Get(f.url + "/")
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	m := metaToken.FindSubmatch(body)
	if m == nil || len(resp.Cookies()) != 1 {
		f.t.Fatalf("the page gave no CSRF token: %s", body)
	}
	return &client{f: f, token: string(m[1]), jar: resp.Cookies()[0]}
}

// post sends a POST as the page's script does; edit may change the request.
func (c *client) post(path string, body any, edit ...func(*http.Request)) (int, map[string]any) {
	c.f.t.Helper()
	data, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", c.f.url+path, bytes.NewReader(data))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", c.f.origin)
	req.Header.Set(csrfHeader, c.token)
	req.AddCookie(c.jar)
	for _, e := range edit {
		e(req)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.f.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if json.Unmarshal(raw, &out) != nil {
		out = map[string]any{"text": strings.TrimSpace(string(raw))}
	}
	return resp.StatusCode, out
}

// must is post expecting 200.
func (c *client) must(path string, body any) map[string]any {
	c.f.t.Helper()
	code, out := c.post(path, body)
	if code != http.StatusOK {
		c.f.t.Fatalf("%s: %d %v", path, code, out)
	}
	return out
}

func challengeOf(t *testing.T, out map[string]any) []byte {
	t.Helper()
	s, _ := out["challenge"].(string)
	b, err := canon.UnB64(s)
	if err != nil || len(b) != 32 {
		t.Fatalf("no challenge in %v", out)
	}
	return b
}

// registerAndSign registers pk, trusts it in the settings and signs a slip
// requiring approval for supplies.order.
func (f *fixture) registerAndSign(c *client, pk *softPasskey) {
	f.t.Helper()
	b := c.must("/api/register/begin", map[string]any{"code": f.code})
	reg := c.must("/api/register/finish", map[string]any{"token": b["token"], "registration": pk.register(challengeOf(f.t, b))})
	f.writeSettings([]string{reg["thumbprint"].(string)})
	prep := c.must("/api/slip/prepare", f.choices())
	c.must("/api/sign", map[string]any{"token": prep["token"], "assertion": pk.assert(challengeOf(f.t, prep))})
}

// signedIn is a client of the page with a passkey registered, trusted and
// signed a slip with (registerAndSign).
func (f *fixture) signedIn() (*client, *softPasskey) {
	f.t.Helper()
	c := f.client()
	pk := newSoftPasskey(f.t, f.origin, "localhost")
	f.registerAndSign(c, pk)
	return c, pk
}

func (f *fixture) choices() SlipChoices {
	now := time.Now().UTC()
	return SlipChoices{Permission: json.RawMessage(f.permission()), IssuerName: "Sam Example", AgentName: "Supplies agent",
		Actions: []string{"supplies.order", "supplies.list"}, Approval: []string{"supplies.order"},
		Limits:    []string{"supplies.order max 500 GBP", "supplies.order count 10 per 86400"},
		ValidFrom: canon.FormatTime(now.Add(-time.Hour)), ValidUntil: canon.FormatTime(now.Add(30 * 24 * time.Hour)),
		Purpose: "Order office supplies for the team."}
}

func testKeys(t testing.TB) jwk.KeySet {
	s, err := jwk.NewLocalSigner(seed(7), seed(9))
	if err != nil {
		t.Fatal(err)
	}
	return s.Keys()
}

func b64(b []byte) string { return canon.B64(b) }

func nowUTC() time.Time { return time.Now().UTC() }

// approvedBook is the book the engine is to write for one approved call
// (docs/design/page.md): the slip; the stub, signed by the agent, naming
// the approval and exactly its details, with the executor's
// countersignature and the approval on the same line; then, when given,
// the cancellation. extra documents are added to the stub's details (the
// outcome document the engine adds today, which an approval cannot name).
func (f *fixture) approvedBook(s *slip.Slip, appr *record.Record, cancellation *record.Record, extra ...record.Detail) []byte {
	f.t.Helper()
	ctx := context.Background()
	agent, err := jwk.NewLocalSigner(seed(7), seed(9))
	if err != nil {
		f.t.Fatal(err)
	}
	exec, err := jwk.NewLocalSigner(seed(3), seed(5))
	if err != nil {
		f.t.Fatal(err)
	}
	c := map[string]any{"type": "provared.stub.v0", "id": canon.NewID(), "slip": s.Fingerprint, "seq": int64(0),
		"when": canon.FormatTime(time.Now()), "approval": appr.Fingerprint}
	for k, v := range appr.Content {
		if k == "action" || k == "amount" || k == "with" || k == "details" {
			c[k] = v
		}
	}
	if len(extra) > 0 {
		ds := append([]any(nil), c["details"].([]any)...)
		for _, d := range extra {
			ds = append(ds, map[string]any{"name": d.Name, "sha256": d.SHA256})
		}
		c["details"] = ds
	}
	stub, err := record.Sign(ctx, record.Kind("stub"), c, agent)
	if err != nil {
		f.t.Fatal(err)
	}
	cs, err := record.Sign(ctx, record.Kind("countersignature"), map[string]any{"type": "provared.countersignature.v0",
		"stub": stub.Fingerprint, "when": canon.FormatTime(time.Now())}, exec)
	if err != nil {
		f.t.Fatal(err)
	}
	var out []byte
	lines := []book.Line{{Slip: s.Record}, {Stub: stub, Countersignature: cs, Approval: appr}}
	if cancellation != nil {
		lines = append(lines, book.Line{Cancellation: cancellation})
	}
	for _, l := range lines {
		b, err := l.Bytes()
		if err != nil {
			f.t.Fatal(err)
		}
		out = append(append(out, b...), '\n')
	}
	return out
}

// state is what GET /api/state answers now.
func (f *fixture) state() State {
	f.t.Helper()
	resp, err := http.Get(f.url + "/api/state")
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	var st State
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || resp.StatusCode != http.StatusOK {
		f.t.Fatalf("the state: %d %v", resp.StatusCode, err)
	}
	return st
}

// thumbprint is the RFC 7638 thumbprint of the passkey's key, as the page
// registers it.
func (p *softPasskey) thumbprint(t testing.TB) string {
	t.Helper()
	spki, err := x509.MarshalPKIXPublicKey(&p.key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	k, err := keyFromSPKI(spki, coseES256)
	if err != nil {
		t.Fatal(err)
	}
	return k.Thumbprint
}
