package upstream

import (
	"context"
	"errors"
	"log/slog"
	"mime"
	"net/http"

	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// This file opens the optional GET stream of an HTTP tool server's
// session: the messages the server sends on its own, outside any answer to
// a POST (its requests, sampling or elicitation among them, and its
// notifications).
//
//   - Opened once a session is ready: after the client's
//     notifications/initialized was accepted, and after a new session began
//     (http_session.go). Opening another cancels the one before.
//   - Each message is handed to the session as a stdio server's line is, so
//     the same rules hold: the server's requests reach the client under an
//     id of the router's and its notifications as they are. An answer is
//     dropped here (logged by size and SHA-256): the transport forbids one
//     on this stream unless a stream is resumed, which the executor never
//     asks, so no answer reaches the client but one to a POST.
//   - A server that offers none answers 405; that, any other refusal, and
//     the stream's end are logged, and it is not opened again until the
//     next session. Its events are bounded as a POST's are (16 MiB).
//   - Stop and a new session cancel it.

// ready opens the GET stream once the client's notifications/initialized
// was accepted (m was posted as req and answered status).
func (h *httpUpstream) ready(m *wire.Message, req *http.Request, status int) {
	if m.Kind == wire.KindNotification && m.Method == "notifications/initialized" && status/100 == 2 {
		h.openStream(req.Header.Get("Mcp-Session-Id"), req.Header.Get("Mcp-Protocol-Version"))
	}
}

// isAnswer reports whether ln is an answer, or a line the session cannot
// read whose id can be found (which the session would end a call with).
func isAnswer(ln []byte) bool {
	sl, err := wire.ReadServerLine(ln)
	if err != nil {
		var we *wire.Error
		return errors.As(err, &we) && we.ID != nil
	}
	return sl.Kind == wire.KindResponse
}

// openStream opens the GET stream of session sid. Callers hold h.mu (either
// way) or pass what they read under it.
func (h *httpUpstream) openStream(sid, protocol string) {
	if h.ctx.Err() != nil {
		return
	}
	ctx, cancel := context.WithCancel(h.ctx)
	h.sess.mu.Lock()
	if h.sess.stopStream != nil {
		h.sess.stopStream()
	}
	h.sess.stopStream = cancel
	h.sess.mu.Unlock()
	h.posts.Add(1)
	go func() {
		defer h.posts.Done()
		defer cancel()
		h.stream(ctx, sid, protocol)
	}()
}

// stream reads the GET stream until it ends or ctx does.
func (h *httpUpstream) stream(ctx context.Context, sid, protocol string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.url, nil)
	if err != nil {
		h.log.Warn("the HTTP tool server's own stream could not be asked for", slog.String("error", withoutURL(err).Error()))
		return
	}
	for k, v := range h.headers {
		req.Header[k] = v
	}
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	if protocol != "" {
		req.Header.Set("Mcp-Protocol-Version", protocol)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := h.client.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			h.log.Warn("the HTTP tool server's own stream could not be opened", slog.String("error", unreachable(err)))
		}
		return
	}
	defer func() { _ = resp.Body.Close() }()
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case resp.StatusCode == http.StatusMethodNotAllowed:
		h.log.Info("the HTTP tool server offers no stream of its own (GET answered 405)")
		return
	case resp.StatusCode/100 != 2 || ct != "text/event-stream":
		h.log.Warn("the HTTP tool server refused its own stream; its own messages come only within answers",
			slog.Int("status", resp.StatusCode), slog.String("contentType", ct))
		return
	}
	h.log.Info("the HTTP tool server's own stream is open")
	err = eachEvent(resp.Body, func(data []byte) {
		ln := h.oneLine(data)
		if ln == nil {
			return
		}
		if isAnswer(ln) {
			h.log.Warn("an answer on the HTTP tool server's own stream is dropped (the transport allows none there)", wire.LineAttr(ln))
			return
		}
		h.hand(ln)
	})
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		h.log.Warn("the HTTP tool server's own stream could not be read further; not opened again until a new session", slog.String("error", withoutURL(err).Error()))
		return
	}
	h.log.Info("the HTTP tool server's own stream ended; not opened again until a new session")
}
