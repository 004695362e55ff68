package page

import (
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
)

//go:embed static
var static embed.FS

// DefaultListen is where the page listens unless told otherwise: loopback.
const DefaultListen = "127.0.0.1:8443"

// PasskeyFile is the name of the page's passkey file, in the settings' folder.
const PasskeyFile = "page-passkey.json"

// CSP is the page's Content-Security-Policy: its own script and style
// files only, no inline script or style, no frames, forms posting nowhere.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'none'; frame-ancestors 'none'; base-uri 'none'"

// csrfCookie and csrfHeader carry the token every POST must show twice.
const (
	csrfCookie = "page_csrf"
	csrfHeader = "X-CSRF-Token"
)

// pendingTTL is how long a prepared challenge waits for the passkey.
const pendingTTL = 5 * time.Minute

// Options configure a page server.
type Options struct {
	ConfigPath string // the executor's settings file
	// Origin is the page's origin as the browser sees it and as a slip's
	// issuer.origin names it, e.g. "http://localhost:8443"; the rpId is its
	// host.
	Origin string
	Logger *slog.Logger
	Now    func() time.Time // nil: time.Now
	// PasskeyPath is the page's passkey file; "" is PasskeyFile in the
	// settings' folder. In a pod, whose settings folder is a read-only
	// mount, it names a file on the executor's own volume.
	PasskeyPath string
}

// Server is the page's HTTP handler.
type Server struct {
	o      Options
	origin string
	host   string // host[:port] the browser sends in Host
	rpID   string
	log    *slog.Logger
	index  *template.Template

	mu      sync.Mutex
	pending map[string]*pending

	code  codeGate   // the registration code (code.go)
	regMu sync.Mutex // one registration or replacement is stored at a time
}

// pending is one challenge handed to the page, used at most once.
type pending struct {
	kind    string // "register", "replace", "replace-confirm", "slip", "approve", "decline", "cancel"
	expires time.Time
	// register, replace: the registration code's generation that let it
	// start (spent when the passkey is stored); replace, replace-confirm:
	// the thumbprint of the passkey being replaced; replace-confirm: the
	// new passkey, stored once the old one signs.
	codeGen  int
	replaces string
	newKey   *Registered
	// what the passkey must sign, and what to do with it
	challenge []byte
	prepared  *slip.Prepared // slip, approve, cancel
	signed    []byte         // decline: the signing input
	request   string         // approve, decline: the queue request id
	slip      *slip.Slip     // approve, decline, cancel: the slip in force when prepared
}

// OriginFor is the page's origin for a listen address: http://localhost:PORT
// (a browser treats http://localhost as a secure context, which WebAuthn
// needs; the format takes http only for localhost).
func OriginFor(listen string) (string, error) {
	_, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", fmt.Errorf("page: the listen address %q: %w", listen, err)
	}
	if port == "80" {
		return "http://localhost", nil
	}
	return "http://localhost:" + port, nil
}

// New makes a page server. The settings are read at once (to fail early)
// and again for every request, so that a change (agent.issuerKeys, a new
// slip) shows without a restart.
func New(o Options) (*Server, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if _, _, err := settings.Load(o.ConfigPath); err != nil {
		return nil, fmt.Errorf("page: %w", err)
	}
	u, err := url.Parse(o.Origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" {
		return nil, fmt.Errorf("page: the origin %q is not scheme://host[:port]", o.Origin)
	}
	raw, err := fs.ReadFile(static, "static/index.html")
	if err != nil {
		return nil, fmt.Errorf("page: the embedded page: %w", err)
	}
	t, err := template.New("index").Parse(string(raw))
	if err != nil {
		return nil, fmt.Errorf("page: the embedded page: %w", err)
	}
	return &Server{o: o, origin: o.Origin, host: u.Host, rpID: u.Hostname(), log: o.Logger, index: t,
		pending: map[string]*pending{}}, nil
}

// Handler serves the page and its API.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.serveIndex)
	sub, _ := fs.Sub(static, "static")
	files := http.FileServer(http.FS(sub))
	for _, name := range []string{"/app.js", "/style.css"} {
		mux.Handle("GET "+name, files)
	}
	mux.HandleFunc("GET /api/state", s.api(s.state))
	mux.HandleFunc("POST /api/register/begin", s.api(s.registerBegin))
	mux.HandleFunc("POST /api/register/finish", s.api(s.registerFinish))
	mux.HandleFunc("POST /api/slip/prepare", s.api(s.slipPrepare))
	mux.HandleFunc("POST /api/approval/prepare", s.api(s.approvalPrepare))
	mux.HandleFunc("POST /api/cancel/prepare", s.api(s.cancelPrepare))
	mux.HandleFunc("POST /api/sign", s.api(s.sign))
	return s.guard(mux)
}

// guard applies what every answer needs: the Host the page's origin names
// (against DNS rebinding), the security headers, and for every POST the
// Origin header and the CSRF token both in the cookie and in the header.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		if r.Host != s.host {
			http.Error(w, "this page answers only at "+s.origin, http.StatusMisdirectedRequest)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if r.Header.Get("Origin") != s.origin {
				http.Error(w, "a request from another page", http.StatusForbidden)
				return
			}
			c, err := r.Cookie(csrfCookie)
			got := r.Header.Get(csrfHeader)
			if err != nil || len(c.Value) < 32 || subtle.ConstantTimeCompare([]byte(c.Value), []byte(got)) != 1 {
				http.Error(w, "the page's CSRF token is missing or wrong; reload the page", http.StatusForbidden)
				return
			}
			if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
				http.Error(w, "the body must be JSON", http.StatusUnsupportedMediaType)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// serveIndex gives the page with a fresh CSRF token, in a cookie
// (SameSite=Strict, HttpOnly) and in a meta element the script reads.
func (s *Server) serveIndex(w http.ResponseWriter, r *http.Request) {
	token := make([]byte, 32)
	rand.Read(token)
	t := canon.B64(token)
	http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: t, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: strings.HasPrefix(s.origin, "https:")})
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := s.index.Execute(w, map[string]string{"CSRF": t}); err != nil {
		s.log.Warn("page: writing the page", slog.String("error", err.Error()))
	}
}

// apiError is an error the person is shown, with its HTTP status.
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func bad(format string, a ...any) error {
	return &apiError{http.StatusBadRequest, fmt.Sprintf(format, a...)}
}

// api wraps a JSON handler: the body (at most 1 MiB) decoded strictly into
// the handler's input, the answer written as JSON, an error as
// {"error": text}.
func (s *Server) api(h func(r *http.Request, body []byte) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, MaxFileSize+1))
		if err == nil && len(body) > MaxFileSize {
			err = bad("the request is larger than 1 MiB")
		}
		var out any
		if err == nil {
			out, err = h(r, body)
		}
		w.Header().Set("Content-Type", "application/json")
		if err != nil {
			status := http.StatusInternalServerError
			var ae *apiError
			if errors.As(err, &ae) {
				status = ae.status
			} else {
				s.log.Warn("page: a request failed", slog.String("path", r.URL.Path), slog.String("error", err.Error()))
			}
			w.WriteHeader(status)
			out = map[string]string{"error": err.Error()}
		}
		data, _ := json.Marshal(out)
		if _, err := w.Write(data); err != nil {
			s.log.Debug("page: the answer did not reach the browser", slog.String("path", r.URL.Path), slog.String("error", err.Error()))
		}
	}
}

func decodeBody(body []byte, v any) error {
	if err := decodeStrict(body, v); err != nil {
		return bad("the request: %v", err)
	}
	return nil
}

// loadSettings reads the settings again.
func (s *Server) loadSettings() (*settings.Settings, error) {
	set, _, err := settings.Load(s.o.ConfigPath)
	if err != nil {
		return nil, fmt.Errorf("page: %w", err)
	}
	return set, nil
}

// passkeyPath is the page's passkey file: Options.PasskeyPath, or
// PasskeyFile in the settings' folder.
func (s *Server) passkeyPath(set *settings.Settings) string {
	if s.o.PasskeyPath != "" {
		return s.o.PasskeyPath
	}
	return filepath.Join(set.Dir, PasskeyFile)
}

// Registered is the page's passkey as its file holds it now, nil when none
// is registered.
func (s *Server) Registered() (*Registered, error) {
	set, err := s.loadSettings()
	if err != nil {
		return nil, err
	}
	return s.registered(set)
}

// IssueCode makes a new registration code, valid for ttl (0:
// DefaultCodeTTL), in place of any earlier one, and gives its text and
// when it expires. The page keeps only its SHA-256: the caller shows the
// text to the person, where nothing else that reaches the page can read
// it, and nowhere else (never in a log).
func (s *Server) IssueCode(ttl time.Duration) (string, time.Time, error) {
	if ttl <= 0 {
		ttl = DefaultCodeTTL
	}
	return s.code.issue(s.o.Now(), ttl)
}

// registered is the page's passkey, nil when none is registered yet.
func (s *Server) registered(set *settings.Settings) (*Registered, error) {
	reg, err := loadRegistered(s.passkeyPath(set))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return reg, err
}

// currentSlip reads and checks the slip file the settings name, trusting
// the passkeys of agent.issuerKeys (or, when none are given, the page's
// own, so that the page can show what it signed); nil when there is none.
func (s *Server) currentSlip(set *settings.Settings, reg *Registered) (*slip.Slip, error) {
	data, err := os.ReadFile(set.Agent.Slip)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("page: reading the slip %s: %w", set.Agent.Slip, err)
	}
	v, err := recordValue(data)
	if err != nil {
		return nil, fmt.Errorf("page: the slip %s: %w", set.Agent.Slip, err)
	}
	trusted := set.Agent.IssuerKeys
	if len(trusted) == 0 && reg != nil {
		trusted = []string{reg.Thumbprint}
	}
	sl, res := slip.Check(v, slip.Options{IssuerKeys: trusted})
	if !res.Sound() || sl == nil {
		if len(res.Problems) > 0 {
			return nil, fmt.Errorf("page: the slip %s does not check: %w", set.Agent.Slip, res.Problems[0])
		}
		return nil, fmt.Errorf("page: the slip %s: its signature could not be checked", set.Agent.Slip)
	}
	return sl, nil
}

// remember keeps a challenge for the passkey and returns its token.
func (s *Server) remember(p *pending) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.o.Now()
	for k, q := range s.pending {
		if now.After(q.expires) {
			delete(s.pending, k)
		}
	}
	p.expires = now.Add(pendingTTL)
	token := canon.NewID()
	s.pending[token] = p
	return token
}

// take removes and returns the challenge of token: each is used once,
// whatever the outcome.
func (s *Server) take(token string) (*pending, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pending[token]
	delete(s.pending, token)
	if !ok || s.o.Now().After(p.expires) {
		return nil, &apiError{http.StatusConflict, "this challenge is unknown, used or expired; start again"}
	}
	return p, nil
}
