package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// This file begins a new session with an HTTP tool server whose session
// ended (the transport's "Session Management": a 404 to a request under
// the session id means the client MUST begin a new session with a new
// InitializeRequest without a session id).
//
//   - The request that met the ended session is not sent again: it ends
//     with its error, and a tool call with its receipt, as before. A 404
//     says the server did not take it, but a proxy in front of the server
//     may answer so after forwarding it, the 400 below says nothing of the
//     kind, and the call's copy line and receipt already bind it to one
//     send; the client may call again, and that call is judged, copied and
//     receipted on its own.
//   - The next line the session writes (any request or notification) first
//     begins the new session: the initialize the client sent the first time
//     (its clientInfo and capabilities, as the executor passed them on),
//     asking for the protocol version the server agreed to then, posted
//     without a session id; then notifications/initialized, when the client
//     had sent it. The answers are the executor's and never reach the
//     client. A server that now agrees to another protocol version is
//     refused: the client and the executor go on speaking the first one.
//     The executor keeps no list of the server's tools (the router asks
//     every server at each tools/list), so none is read again; a client
//     that lists the tools again sees the new session's.
//   - A 400 under a session id whose JSON-RPC message names the session
//     ("Bad Request: No valid session ID provided", as servers built on
//     the TypeScript SDK's example answer, the everything server among
//     them) is taken as the session's end too.
//   - Bounded: at most maxSessionRenewals new sessions in a row with no
//     request answered (2xx) between them. Past that, each later line is
//     not sent; a request gets an error that says to restart the executor.
//     A new session that cannot be begun (the server unreachable, its
//     initialize refused) counts as one; the line that asked for it ends
//     with that error, not sent.
//   - Logged as "a new session with the HTTP tool server began", with the
//     protocol version and the count; never a header or a session id.

// maxSessionRenewals is how many new sessions in a row the executor
// begins with no request answered between them.
const maxSessionRenewals = 3

// renewTimeout bounds the beginning of a new session (its two POSTs),
// during which no other line is posted.
const renewTimeout = 30 * time.Second

// httpSession is what an HTTP upstream keeps to begin a new session.
type httpSession struct {
	mu          sync.Mutex
	initParams  []byte // the params of the client's initialize, as sent
	initialized bool   // the client sent notifications/initialized
	stale       bool   // the server ended the session; the next line begins a new one
	renewals    int    // new sessions begun in a row with no request answered between
	total       int    // new sessions begun, for the executor's own ids
	stopStream  func() // cancels the GET stream open (http_stream.go)
}

// rememberInit keeps the params of the client's initialize; a new
// initialize of the client's begins afresh.
func (s *httpSession) rememberInit(m *wire.Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.initParams = bytes.Clone(m.Params)
	s.initialized, s.stale, s.renewals = false, false, 0
}

// answered notes a request answered with a 2xx status.
func (s *httpSession) answered() {
	s.mu.Lock()
	s.renewals = 0
	s.mu.Unlock()
}

// sessionGone notes that the session req was sent under ended, and
// returns what the model's text says of it. A request that was in flight
// while a new session began ends the old one only: the new one stands.
func (h *httpUpstream) sessionGone(req *http.Request) string {
	h.mu.RLock()
	current := h.sessionID == req.Header.Get("Mcp-Session-Id")
	h.mu.RUnlock()
	s := &h.sess
	s.mu.Lock()
	defer s.mu.Unlock()
	if current {
		s.stale = true
	}
	if s.stale && s.renewals >= maxSessionRenewals {
		return gaveUpText
	}
	return "this request was not sent again; the executor begins a new session for the next one"
}

var gaveUpText = "the executor began " + strconv.Itoa(maxSessionRenewals) + " new sessions in a row and the server ended each before answering a request, so it begins no more: restart the executor once the server keeps its sessions"

// sessionEnded reports whether an HTTP error status says the session of
// req ended: 404 under a session id, or 400 under a session id whose
// JSON-RPC message (said) names the session.
func sessionEnded(req *http.Request, status int, said string) bool {
	if req.Header.Get("Mcp-Session-Id") == "" {
		return false
	}
	return status == http.StatusNotFound ||
		status == http.StatusBadRequest && strings.Contains(strings.ToLower(said), "session")
}

// sessionFor makes sure m goes to a live session: when the last one ended
// it begins a new one first. It returns false when m is not to be sent
// (a request among them is answered with the executor's error).
func (h *httpUpstream) sessionFor(m *wire.Message) bool {
	s := &h.sess
	s.mu.Lock()
	if m.Kind == wire.KindNotification && m.Method == "notifications/initialized" {
		s.initialized = true
	}
	if !s.stale {
		s.mu.Unlock()
		return true
	}
	if s.renewals >= maxSessionRenewals {
		s.mu.Unlock()
		h.log.Warn("the HTTP tool server's session ended and the executor begins no more; a message is not sent",
			slog.String("method", m.Method))
		h.fail(m, "the HTTP tool server's session ended: "+gaveUpText)
		return false
	}
	s.renewals++
	s.total++
	n, total, params, initialized := s.renewals, s.total, s.initParams, s.initialized
	s.mu.Unlock()

	h.mu.Lock()
	err := h.renew(total, params, initialized)
	protocol := h.protocol
	h.mu.Unlock()
	if err != nil {
		if h.ctx.Err() != nil {
			return false
		}
		h.log.Warn("a new session with the HTTP tool server could not be begun", slog.Int("renewal", n), slog.String("error", err.Error()))
		h.fail(m, "the HTTP tool server's session ended and a new one could not be begun, so this request was not sent: "+err.Error())
		return false
	}
	s.mu.Lock()
	s.stale = false
	s.mu.Unlock()
	h.log.Info("a new session with the HTTP tool server began", slog.Int("renewal", n), slog.String("protocol", protocol))
	return true
}

// renew begins a new session: the first initialize's params asking for the
// protocol version agreed then, posted without a session id, then
// notifications/initialized when the client had sent it. Callers hold h.mu
// for writing.
func (h *httpUpstream) renew(n int, params []byte, initialized bool) error {
	protocol := h.protocol
	var p map[string]json.RawMessage
	if err := json.Unmarshal(params, &p); err != nil || p == nil {
		return errors.New("the client's first initialize has no params to begin it with")
	}
	if protocol != "" {
		p["protocolVersion"] = wire.Quote(protocol)
	}
	again, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("the initialize could not be written: %w", err)
	}
	id := wire.Quote("mcp-executor-session-" + strconv.Itoa(n))
	line := append(append(append(append([]byte(`{"jsonrpc":"2.0","id":`), id...), `,"method":"initialize","params":`...), again...), '}')

	ctx, cancel := context.WithTimeout(h.ctx, renewTimeout)
	defer cancel()
	h.sessionID, h.protocol = "", ""
	answer, sid, err := h.exchange(ctx, line, id)
	h.protocol = protocol
	if err != nil {
		return fmt.Errorf("its initialize: %w", err)
	}
	m, err := wire.Inspect(answer)
	switch {
	case err != nil:
		return errors.New("its answer to the initialize could not be read")
	case m.Error != nil:
		return errors.New("it refused the initialize (" + errorBodyMessage(bytes.NewReader(answer)) + ")")
	}
	if v, found, _ := wire.Pointer(m.Result, "/protocolVersion"); protocol != "" {
		if got, ok := wire.Unquote(v); !found || !ok || got != protocol {
			return fmt.Errorf("it now agrees to protocol version %.40q where the session began with %q; restart the executor", got, protocol)
		}
	}
	if sid != "" && !visibleASCII(sid) {
		return errors.New("its session id (Mcp-Session-Id) holds characters other than visible ASCII, which the transport does not allow")
	}
	h.sessionID = sid
	if initialized {
		if _, _, err := h.exchange(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil); err != nil {
			return fmt.Errorf("its notifications/initialized: %w", err)
		}
		h.openStream(h.sessionID, h.protocol)
	}
	return nil
}

// exchange posts one message of the executor's own under the session as
// it stands (callers hold h.mu for writing) and returns the answer under
// id (none is looked for when id is nil) and the session id the server
// named. Every other message of the answer goes to the session, as with
// any POST.
func (h *httpUpstream) exchange(ctx context.Context, line, id []byte) (answer []byte, sid string, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(line))
	if err != nil {
		return nil, "", withoutURL(err)
	}
	h.setHeaders(req)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, "", errors.New(unreachable(err))
	}
	defer func() { _ = resp.Body.Close() }()
	sid = resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode/100 != 2 {
		said := errorBodyMessage(resp.Body)
		why := "the HTTP tool server answered " + resp.Status
		if said != "" {
			why += " (it says: " + said + ")"
		}
		return nil, "", errors.New(why)
	}
	deliver := func(msg []byte) {
		ln := h.oneLine(msg)
		switch {
		case ln == nil:
		case id != nil && answer == nil && answers(ln, id):
			answer = ln
		default:
			h.hand(ln)
		}
	}
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct == "text/event-stream" {
		err = withoutURL(eachEvent(resp.Body, deliver))
	} else if resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusNoContent {
		body, rerr := io.ReadAll(io.LimitReader(resp.Body, wire.MaxLine+1))
		switch {
		case rerr != nil:
			err = withoutURL(rerr)
		case len(body) > wire.MaxLine:
			err = errors.New("the answer is over 16 MiB")
		default:
			deliver(body)
		}
	}
	if id != nil && answer == nil {
		if err != nil {
			return nil, "", fmt.Errorf("the answer could not be read: %w", err)
		}
		return nil, "", errors.New("the answer holds no answer to it (no message under its id)")
	}
	return answer, sid, nil
}
