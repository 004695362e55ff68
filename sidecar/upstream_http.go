package sidecar

import (
	"bufio"
	"bytes"
	"context"
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
// TLS is Go's default: certificates verified against the system's roots.
// The session id (Mcp-Session-Id) and protocol version of the initialize
// answer are sent with every later request. The optional GET stream for
// messages the server sends on its own is not opened: such a server's
// requests and notifications reach the client only within the answers to
// POSTs.
type httpUpstream struct {
	url     string
	headers http.Header
	client  *http.Client
	log     *slog.Logger

	inR *io.PipeReader
	inW *io.PipeWriter
	out *io.PipeReader
	ow  *io.PipeWriter
	w   *wire.Writer

	mu        sync.RWMutex // held for writing while an initialize is being answered
	sessionID string
	protocol  string

	ctx    context.Context
	cancel context.CancelFunc
	posts  sync.WaitGroup
	done   chan struct{}
	once   sync.Once
}

func startHTTPUpstream(url string, order []settings.EnvVar, values map[string]string, log *slog.Logger) *httpUpstream {
	h := &httpUpstream{url: url, headers: http.Header{}, log: log, done: make(chan struct{}),
		client: &http.Client{Transport: http.DefaultTransport, CheckRedirect: noRedirect}}
	for _, v := range order {
		h.headers.Set(v.Name, values[v.Name])
	}
	h.inR, h.inW = io.Pipe()
	h.out, h.ow = io.Pipe()
	h.w = wire.NewWriter(h.ow)
	h.ctx, h.cancel = context.WithCancel(context.Background())
	go h.run()
	return h
}

func (h *httpUpstream) Input() io.Writer      { return h.inW }
func (h *httpUpstream) Output() io.Reader     { return h.out }
func (h *httpUpstream) Done() <-chan struct{} { return h.done }
func (h *httpUpstream) Wait() (int, error)    { <-h.done; return 0, nil }

// Stop ends the HTTP session (DELETE, as the transport asks) and the output.
func (h *httpUpstream) Stop(ctx context.Context) error {
	_ = h.inW.Close()
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

// run posts every line written to the input, each in its own goroutine so
// that calls are in flight together; an initialize is answered before any
// later line is posted.
func (h *httpUpstream) run() {
	rd := wire.NewReader(h.inR)
	for {
		line, err := rd.ReadLine()
		if err != nil {
			return
		}
		m, err := wire.Inspect(line)
		if err != nil {
			continue
		}
		if m.Kind == wire.KindRequest && m.Method == "initialize" {
			h.mu.Lock()
			h.post(line, m, true)
			h.mu.Unlock()
			continue
		}
		h.posts.Add(1)
		go func() {
			defer h.posts.Done()
			h.mu.RLock()
			defer h.mu.RUnlock()
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

// post sends one message and hands the server's answer on. Callers hold
// h.mu (for writing when init is set).
func (h *httpUpstream) post(line []byte, m *wire.Message, init bool) {
	req, err := http.NewRequestWithContext(h.ctx, http.MethodPost, h.url, bytes.NewReader(line))
	if err != nil {
		h.fail(m, "the request could not be made: "+err.Error())
		return
	}
	h.setHeaders(req)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := h.client.Do(req)
	if err != nil {
		if h.ctx.Err() == nil {
			h.log.Warn("the HTTP tool server could not be reached", slog.String("error", withoutURL(err).Error()))
			h.fail(m, "the HTTP tool server could not be reached")
		}
		return
	}
	defer func() { _ = resp.Body.Close() }()
	if init {
		if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
			h.sessionID = sid
		}
	}
	if resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent {
		return
	}
	if resp.StatusCode/100 != 2 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		h.log.Warn("the HTTP tool server answered with an HTTP error", slog.Int("status", resp.StatusCode))
		h.fail(m, "the HTTP tool server answered "+resp.Status)
		return
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "text/event-stream":
		h.readEvents(resp.Body, init)
	default:
		body, err := io.ReadAll(io.LimitReader(resp.Body, wire.MaxLine+1))
		if err != nil {
			h.fail(m, "the HTTP tool server's answer could not be read")
			return
		}
		if len(body) > wire.MaxLine {
			h.fail(m, "the HTTP tool server's answer is larger than a message may be")
			return
		}
		h.emit(body, init)
	}
}

// readEvents hands on the data of each event of an event stream.
func (h *httpUpstream) readEvents(body io.Reader, init bool) {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64*1024), wire.MaxLine+1)
	var data []byte
	for sc.Scan() {
		ln := sc.Bytes()
		switch {
		case len(ln) == 0:
			if len(data) > 0 {
				h.emit(data, init)
				data = nil
			}
		case bytes.HasPrefix(ln, []byte("data:")):
			v := bytes.TrimPrefix(ln[5:], []byte(" "))
			if len(data)+1+len(v) > wire.MaxLine {
				h.log.Warn("an event of the HTTP tool server is larger than a message may be; the rest of its stream is dropped", slog.Int("limit", wire.MaxLine))
				return
			}
			if data != nil {
				data = append(data, '\n')
			}
			data = append(data, v...)
		}
	}
	if len(data) > 0 {
		h.emit(data, init)
	}
}

// emit writes one message of the server's as one line.
func (h *httpUpstream) emit(msg []byte, init bool) {
	msg = bytes.TrimSpace(msg)
	if len(msg) == 0 {
		return
	}
	if bytes.ContainsAny(msg, "\r\n") {
		var b bytes.Buffer
		if err := json.Compact(&b, msg); err != nil {
			h.log.Warn("a message of the HTTP tool server is not JSON; dropped", wire.LineAttr(msg))
			return
		}
		msg = b.Bytes()
	}
	if init {
		if m, err := wire.Inspect(msg); err == nil && m.Result != nil {
			if v, found, _ := wire.Pointer(m.Result, "/protocolVersion"); found {
				if p, ok := unquoteID(v); ok {
					h.protocol = p
				}
			}
		}
	}
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

// noRedirect keeps the client from following a redirect: the headers
// (credentials among them) would go to wherever the server pointed, and a
// 3xx is then an HTTP error like any other.
func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// withoutURL is err without the address it names (*url.Error): the
// settings' URL may carry a token in its query, and logs hold no secret.
func withoutURL(err error) error {
	var ue *neturl.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", ue.Op, ue.Err)
	}
	return err
}
