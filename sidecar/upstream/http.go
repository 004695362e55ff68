package upstream

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	neturl "net/url"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// httpUpstream is a tool server reached by MCP's streamable HTTP
// transport, spoken as raw JSON-RPC: every line the session writes is one
// POST; a JSON answer or each message of an event stream is one line of
// output. The server's bytes are kept (only the line breaks of a
// pretty-printed message are taken out, which RFC 8785 fingerprints do not
// see), so its results are bound exactly as a stdio server's are. go-sdk's
// StreamableClientTransport decodes and re-encodes every message, which
// would lose that; hence this small client.
//
// TLS is Go's default: certificates verified against the system's roots;
// one that does not verify is refused. The session id (Mcp-Session-Id) and
// protocol version of the initialize answer are sent with every later
// request. The optional GET stream for messages the server sends on its own
// is opened once the session is ready (http_stream.go).
//
// A hostile or broken server cannot hold a request open or leak the
// headers: a request whose POST answer (a JSON body or an event stream)
// holds no answer under its id is answered with a JSON-RPC error of the
// executor's as soon as that answer ends (the messages of other ids go on to
// the session, which drops and counts them); an answer over 16 MiB is not
// read further; a redirect is followed only within the URL's origin
// (scheme, host and port), so the headers never go to another host, and
// only when it keeps the POST (307, 308); a 404
// to a request under a session id says the session ended: that request
// ends with its error, and the next line begins a new session first
// (http_session.go).
type httpUpstream struct {
	url     string
	headers http.Header
	client  *http.Client
	log     *slog.Logger

	in      chan sentLine // the session's lines, taken by run one at a time
	closed  chan struct{} // closed by Stop: Send takes no more lines
	closing sync.Once
	out     *io.PipeReader
	ow      *io.PipeWriter
	w       *wire.Writer

	mu        sync.RWMutex // held for writing while an initialize is being answered
	sessionID string
	protocol  string
	sess      httpSession // what a new session needs (http_session.go)

	ctx    context.Context
	cancel context.CancelFunc
	posts  sync.WaitGroup
	done   chan struct{}
	once   sync.Once
}

func startHTTPUpstream(url string, order []settings.EnvVar, values map[string]string, log *slog.Logger) *httpUpstream {
	h := &httpUpstream{url: url, headers: http.Header{}, log: log, done: make(chan struct{}),
		client: &http.Client{Transport: http.DefaultTransport, CheckRedirect: sameOriginRedirect}}
	for _, v := range order {
		h.headers.Set(v.Name, values[v.Name])
	}
	h.in, h.closed = make(chan sentLine), make(chan struct{})
	h.out, h.ow = io.Pipe()
	h.w = wire.NewWriter(h.ow)
	h.ctx, h.cancel = context.WithCancel(context.Background())
	go h.run()
	return h
}

func (h *httpUpstream) Output() io.Reader     { return h.out }
func (h *httpUpstream) Done() <-chan struct{} { return h.done }
func (h *httpUpstream) Wait() (int, error)    { <-h.done; return 0, nil }

// sentLine is a line Send took, with its reading.
type sentLine struct {
	line []byte
	m    *wire.Message
}

// Send hands the line and its reading to run, which posts it; it waits
// while run is busy beginning a session (an initialize is answered before
// any later line is posted).
func (h *httpUpstream) Send(line []byte, m *wire.Message) error {
	select {
	case h.in <- sentLine{line, m}:
		return nil
	case <-h.closed:
		return io.ErrClosedPipe
	}
}

// Close has nothing to let go of beyond what Stop ended.
func (h *httpUpstream) Close(context.Context) error { return nil }

// Stop ends the HTTP session (DELETE, as the transport asks) and the output.
func (h *httpUpstream) Stop(ctx context.Context) error {
	h.closing.Do(func() { close(h.closed) })
	h.mu.RLock()
	sid := h.sessionID
	h.mu.RUnlock()
	if sid != "" {
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		req, err := http.NewRequestWithContext(dctx, http.MethodDelete, h.url, nil)
		if err == nil {
			h.setHeaders(req)
			if resp, err := h.client.Do(req); err == nil {
				_ = resp.Body.Close()
			}
		}
		cancel()
	}
	h.cancel()
	h.posts.Wait()
	h.end()
	return nil
}

func (h *httpUpstream) end() {
	h.once.Do(func() {
		_ = h.ow.Close()
		close(h.done)
	})
}

// run posts every line sent, each in its own goroutine so that calls are
// in flight together; an initialize is answered before any later line is
// posted.
func (h *httpUpstream) run() {
	for {
		var s sentLine
		select {
		case s = <-h.in:
		case <-h.closed:
			return
		}
		line, m := s.line, s.m
		if m.Kind == wire.KindRequest && m.Method == "initialize" {
			h.mu.Lock()
			h.sess.rememberInit(m)
			h.sessionID, h.protocol = "", "" // an initialize begins a session: sent without one
			h.post(line, m, true)
			h.mu.Unlock()
			continue
		}
		if !h.sessionFor(m) {
			continue
		}
		h.posts.Add(1)
		go func() {
			defer h.posts.Done()
			h.post(line, m, false)
		}()
	}
}

func (h *httpUpstream) setHeaders(req *http.Request) {
	for k, v := range h.headers {
		req.Header[k] = v
	}
	if h.sessionID != "" {
		req.Header.Set("Mcp-Session-Id", h.sessionID)
	}
	if h.protocol != "" {
		req.Header.Set("Mcp-Protocol-Version", h.protocol)
	}
}

// postHeaders sets the headers of a POST. An initialize (init) is posted
// with h.mu held for writing; any other message reads the session under
// h.mu only while its headers are set, so a new session waits for no
// request in flight.
func (h *httpUpstream) postHeaders(req *http.Request, init bool) {
	if !init {
		h.mu.RLock()
		defer h.mu.RUnlock()
	}
	h.setHeaders(req)
}

// post sends one message and hands the server's answer on.
func (h *httpUpstream) post(line []byte, m *wire.Message, init bool) {
	req, err := http.NewRequestWithContext(h.ctx, http.MethodPost, h.url, bytes.NewReader(line))
	if err != nil {
		h.fail(m, "the request could not be made: "+err.Error())
		return
	}
	h.postHeaders(req, init)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := h.client.Do(req)
	if err != nil {
		if h.ctx.Err() == nil {
			h.log.Warn("the HTTP tool server could not be reached", slog.String("error", withoutURL(err).Error()))
			h.fail(m, unreachable(err))
		}
		return
	}
	defer func() { _ = resp.Body.Close() }()
	if init {
		if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
			if !visibleASCII(sid) {
				h.log.Warn("the HTTP tool server named a session id that is not visible ASCII")
				h.fail(m, "the HTTP tool server's session id (Mcp-Session-Id) holds characters other than visible ASCII, which the transport does not allow")
				return
			}
			h.sessionID = sid
		}
	}
	h.ready(m, req, resp.StatusCode)
	if resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent {
		if m.Kind == wire.KindRequest {
			h.fail(m, "the HTTP tool server accepted the request without answering it (HTTP "+resp.Status+")")
		}
		return
	}
	if resp.StatusCode/100 != 2 {
		h.httpError(m, req, resp)
		return
	}
	if m.Kind == wire.KindRequest {
		h.sess.answered()
	}
	answered := false
	seen := func(msg []byte) {
		if m.Kind == wire.KindRequest && answers(msg, m.ID) {
			answered = true
		}
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "text/event-stream":
		if err := h.readEvents(resp.Body, init, seen); err != nil && !answered {
			if h.ctx.Err() != nil {
				return
			}
			h.log.Warn("the HTTP tool server's event stream could not be read", slog.String("error", err.Error()))
			h.fail(m, "the HTTP tool server's event stream could not be read: "+err.Error())
			return
		}
	default:
		body, err := io.ReadAll(io.LimitReader(resp.Body, wire.MaxLine+1))
		switch {
		case err != nil:
			if h.ctx.Err() != nil {
				return
			}
			h.fail(m, "the HTTP tool server's answer could not be read")
			return
		case len(body) > wire.MaxLine:
			h.log.Warn("the HTTP tool server's answer is over 16 MiB; not read further")
			h.fail(m, "the HTTP tool server's answer is over 16 MiB")
			return
		}
		seen(h.emit(body, init))
	}
	if m.Kind == wire.KindRequest && !answered {
		h.log.Warn("the HTTP tool server's answer to a POST holds no answer under the request's id")
		h.fail(m, "the HTTP tool server's answer holds no answer to the request (no message under its id)")
	}
}

// visibleASCII reports whether s is only characters 0x21 to 0x7E, as a
// session id must be.
func visibleASCII(s string) bool {
	for i := range len(s) {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// httpError answers m, whose POST got an HTTP error status: the status
// and the server's JSON-RPC message, when its body holds one. A 404 under
// a session id is the session's end (the transport's rule), and so is a
// 400 under a session id whose message names the session (as servers
// built on the TypeScript SDK's example answer): m is not sent again, and
// the next line begins a new session (sessionEnded).
func (h *httpUpstream) httpError(m *wire.Message, req *http.Request, resp *http.Response) {
	said := errorBodyMessage(resp.Body)
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	ended := sessionEnded(req, resp.StatusCode, said)
	if resp.StatusCode == http.StatusNotFound && ended {
		h.log.Warn("the HTTP tool server no longer knows the executor's session", slog.Int("status", resp.StatusCode))
		h.fail(m, "the HTTP tool server no longer knows the session (HTTP 404): it expired or the server restarted; "+h.sessionGone(req))
		return
	}
	h.log.Warn("the HTTP tool server answered with an HTTP error", slog.Int("status", resp.StatusCode), slog.Bool("sessionEnded", ended))
	why := "the HTTP tool server answered " + resp.Status
	if said != "" {
		why += " (it says: " + said + ")"
	}
	if ended {
		why += "; the executor takes it as the session's end: " + h.sessionGone(req)
	}
	h.fail(m, why)
}

// errorBodyMessage is the message of a JSON-RPC error in an HTTP error's
// body (as a server answers a request under a session it does not know),
// at most 200 characters of printable text; "" when there is none.
func errorBodyMessage(body io.Reader) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.NewDecoder(io.LimitReader(body, 64<<10)).Decode(&e); err != nil {
		return ""
	}
	msg := strings.Map(func(r rune) rune {
		if !unicode.IsPrint(r) {
			return ' '
		}
		return r
	}, strings.TrimSpace(e.Error.Message))
	if r := []rune(msg); len(r) > 200 {
		msg = string(r[:200]) + "…"
	}
	return msg
}

// errCrossOrigin is a redirect the executor does not follow.
var errCrossOrigin = errors.New("a redirect to another origin is not followed")

// errMethodChange is a redirect (301, 302, 303) that would turn the POST
// into a GET without its message.
var errMethodChange = errors.New("a redirect that changes the request's method is not followed")

// sameOriginRedirect follows a redirect only within the first request's
// origin (scheme, host and port), at most 10 times: the headers (the
// credentials among them) never go to another host. Only a redirect that
// keeps the method and the body (307, 308) is followed.
func sameOriginRedirect(req *http.Request, via []*http.Request) error {
	first := via[0].URL
	if req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
		return fmt.Errorf("%w (to %s://%s)", errCrossOrigin, req.URL.Scheme, req.URL.Host)
	}
	if req.Method != via[0].Method {
		return errMethodChange
	}
	if len(via) >= 10 {
		return errors.New("more than 10 redirects")
	}
	return nil
}

// unreachable is the model's text for a POST that got no answer: a
// certificate that did not verify and a redirect to another origin are
// named as such.
func unreachable(err error) string {
	var cv *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	var ci x509.CertificateInvalidError
	switch {
	case errors.As(err, &cv), errors.As(err, &ua), errors.As(err, &hn), errors.As(err, &ci):
		return "the HTTP tool server's TLS certificate did not verify, so the executor refused the connection"
	case errors.Is(err, errCrossOrigin):
		return "the HTTP tool server redirected the request to another origin, which the executor does not follow (the headers stay with the configured URL)"
	case errors.Is(err, errMethodChange):
		return "the HTTP tool server redirected the request with a status that turns it into a GET (301, 302 or 303), which the executor does not follow; set the URL the redirect names"
	}
	return "the HTTP tool server could not be reached"
}

// answers reports whether msg is an answer under id (a message the session
// cannot read still answers id when its id can be found: the session ends
// the call with it).
func answers(msg, id []byte) bool {
	if msg == nil {
		return false
	}
	sl, err := wire.ReadServerLine(msg)
	if err != nil {
		var we *wire.Error
		return errors.As(err, &we) && we.ID != nil && sameID(we.ID, id)
	}
	return sl.Kind == wire.KindResponse && sameID(sl.Msg.ID, id)
}

// sameID compares two JSON-RPC ids: texts by their value, numbers as written.
func sameID(a, b []byte) bool {
	as, aok := wire.Unquote(a)
	bs, bok := wire.Unquote(b)
	if aok || bok {
		return aok && bok && as == bs
	}
	return bytes.Equal(a, b)
}

// readEvents hands on the data of each event of an event stream, and tells
// seen of each message handed on. It returns the stream's read error (an
// event over 16 MiB among them).
func (h *httpUpstream) readEvents(body io.Reader, init bool, seen func([]byte)) error {
	return eachEvent(body, func(data []byte) { seen(h.emit(data, init)) })
}

// eachEvent calls deliver with the data of each event of an event stream
// (at most 16 MiB each), and returns the stream's read error.
func eachEvent(body io.Reader, deliver func([]byte)) error {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64*1024), wire.MaxLine+1)
	var data []byte
	for sc.Scan() {
		ln := sc.Bytes()
		switch {
		case len(ln) == 0:
			if len(data) > 0 {
				deliver(data)
				data = nil
			}
		case bytes.HasPrefix(ln, []byte("data:")):
			v := bytes.TrimPrefix(ln[5:], []byte(" "))
			if data != nil {
				data = append(data, '\n')
			}
			if len(data)+len(v) > wire.MaxLine {
				return errors.New("an event is over 16 MiB")
			}
			data = append(data, v...)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return errors.New("a line of the stream is over 16 MiB")
		}
		return err
	}
	if len(data) > 0 {
		deliver(data)
	}
	return nil
}

// emit writes one message of the server's as one line, and returns the
// line (nil when none was written).
func (h *httpUpstream) emit(msg []byte, init bool) []byte {
	msg = h.oneLine(msg)
	if msg == nil {
		return nil
	}
	if init {
		if m, err := wire.Inspect(msg); err == nil && m.Result != nil {
			if v, found, _ := wire.Pointer(m.Result, "/protocolVersion"); found {
				if p, ok := wire.Unquote(v); ok {
					h.protocol = p
				}
			}
		}
	}
	h.hand(msg)
	return msg
}

// oneLine is a message of the server's as one line: spaces around it taken
// off, a pretty-printed one made compact; nil when there is none (or it
// spans lines and is not JSON: dropped and logged).
func (h *httpUpstream) oneLine(msg []byte) []byte {
	msg = bytes.TrimSpace(msg)
	if len(msg) == 0 {
		return nil
	}
	if bytes.ContainsAny(msg, "\r\n") {
		var b bytes.Buffer
		if err := json.Compact(&b, msg); err != nil {
			h.log.Warn("a message of the HTTP tool server is not JSON; dropped", wire.LineAttr(msg))
			return nil
		}
		msg = b.Bytes()
	}
	return msg
}

// hand writes one line of the server's to the output.
func (h *httpUpstream) hand(msg []byte) {
	if err := h.w.WriteLine(msg); err != nil && !errors.Is(err, io.ErrClosedPipe) {
		h.log.Warn("handing on a message of the HTTP tool server", slog.String("error", err.Error()))
	}
}

// fail answers a request the server did not answer with a JSON-RPC error
// of the executor's (notifications and answers get none).
func (h *httpUpstream) fail(m *wire.Message, why string) {
	if m.Kind != wire.KindRequest {
		return
	}
	if err := h.w.WriteLine(wire.ErrorLine(m.ID, wire.CodeInternalError, why, nil)); err != nil && !errors.Is(err, io.ErrClosedPipe) {
		h.log.Warn("handing on an HTTP failure", slog.String("error", strings.TrimSpace(err.Error())))
	}
}

// withoutURL is err without the address it names (*url.Error): the
// settings' URL may carry a token in its query, and logs hold no secret.
func withoutURL(err error) error {
	var ue *neturl.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", ue.Op, ue.Err)
	}
	return err
}
