package upstream

import (
	"bytes"
	"compress/gzip"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// The answers below are what a hostile or odd streamable HTTP server could
// send; no real MCP server sends most of them, so each test runs a small
// net/http server that writes exactly these bytes (real sockets, real HTTP).

const hostileAnswer = `{"jsonrpc":"2.0","id":7,"result":{"ok":true}}`

var hostileRequest = []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t"}}`)

// postOnce starts the HTTP upstream against a server whose handler is
// serve, posts one request and returns the lines handed on and the log.
func postOnce(t *testing.T, serve http.HandlerFunc) ([]string, string) {
	t.Helper()
	srv := httptest.NewServer(serve)
	defer srv.Close()
	var logBuf bytes.Buffer
	var logMu sync.Mutex
	log := slog.New(slog.NewJSONHandler(lockedWriter{&logMu, &logBuf}, nil))
	lines := exchangeOnce(t, startHTTPUpstream(srv.URL+"/mcp?key=query-secret", nil, nil, log))
	logMu.Lock()
	defer logMu.Unlock()
	return lines, logBuf.String()
}

// exchangeOnce posts hostileRequest through h, ends h and returns every
// line h handed on.
func exchangeOnce(t *testing.T, h *httpUpstream) []string {
	t.Helper()
	var lines []string
	read := make(chan struct{})
	go func() {
		defer close(read)
		rd := wire.NewReader(h.Output())
		for {
			line, err := rd.ReadLine()
			if err != nil {
				return
			}
			lines = append(lines, string(line))
		}
	}()
	m, err := wire.Inspect(hostileRequest)
	if err != nil {
		t.Fatal(err)
	}
	h.post(hostileRequest, m, false) // synchronous: every line is handed on when it returns
	h.cancel()
	h.end()
	<-read
	h.closing.Do(func() { close(h.closed) })
	return lines
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// noAnswer: the server's bytes are no answer; the executor answers.
var noAnswer []string

func writeBody(contentType, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		_, _ = io.WriteString(w, body)
	}
}

// TestHTTPUpstreamFraming: each way of framing the one answer hands on
// exactly that answer, one line; what is not one message is handed on as
// the executor's error for the request, never as the server's answer.
func TestHTTPUpstreamFraming(t *testing.T) {
	split := `{"jsonrpc":"2.0",` + "\n" + `"id":7,"result":{"ok":true}}`
	for _, c := range []struct {
		name  string
		serve http.HandlerFunc
		want  []string
	}{
		{"json", writeBody("application/json", hostileAnswer), []string{hostileAnswer}},
		{"json charset", writeBody("application/json; charset=utf-8", hostileAnswer), []string{hostileAnswer}},
		{"json upper case type", writeBody("APPLICATION/JSON", hostileAnswer), []string{hostileAnswer}},
		{"json indented", writeBody("application/json", "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 7,\n  \"result\": {\"ok\": true}\n}\n"), []string{`{"jsonrpc":"2.0","id":7,"result":{"ok":true}}`}},
		{"json two values on lines", writeBody("application/json", hostileAnswer+"\n"+hostileAnswer), noAnswer},
		{"json two values on one line", writeBody("application/json", hostileAnswer+hostileAnswer), noAnswer},
		{"json with a bom", writeBody("application/json", "\uFEFF"+hostileAnswer), noAnswer},
		{"json with a trailing nul", writeBody("application/json", hostileAnswer+"\x00"), noAnswer},
		{"json batch", writeBody("application/json", "["+hostileAnswer+"]"), noAnswer},
		{"sse lf", writeBody("text/event-stream", "event: message\ndata: "+hostileAnswer+"\n\n"), []string{hostileAnswer}},
		{"sse crlf", writeBody("text/event-stream", "event: message\r\nid: 1\r\ndata: "+hostileAnswer+"\r\n\r\n"), []string{hostileAnswer}},
		{"sse upper case type", writeBody("Text/Event-Stream; charset=utf-8", "data: "+hostileAnswer+"\n\n"), []string{hostileAnswer}},
		{"sse no space", writeBody("text/event-stream", "data:"+hostileAnswer+"\n\n"), []string{hostileAnswer}},
		{"sse comment and retry", writeBody("text/event-stream", ": keep-alive\nretry: 10\ndata: "+hostileAnswer+"\n\n: bye\n"), []string{hostileAnswer}},
		{"sse data over two lines", writeBody("text/event-stream", "data: "+strings.Replace(split, "\n", "\ndata: ", 1)+"\n\n"), []string{hostileAnswer}},
		{"sse no blank line at the end", writeBody("text/event-stream", "data: "+hostileAnswer), []string{hostileAnswer}},
		{"sse two events", writeBody("text/event-stream", "data: "+hostileAnswer+"\n\ndata: "+hostileAnswer+"\n\n"), []string{hostileAnswer, hostileAnswer}},
		{"sse two values in one event", writeBody("text/event-stream", "data: "+hostileAnswer+"\ndata: "+hostileAnswer+"\n\n"), noAnswer},
		{"sse without its type", writeBody("", "data: "+hostileAnswer+"\n\n"), noAnswer},
		{"sse split across chunks", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			for _, part := range []string{"da", "ta: " + hostileAnswer[:10], hostileAnswer[10:] + "\r", "\n", "\r\n"} {
				_, _ = io.WriteString(w, part)
				w.(http.Flusher).Flush()
			}
		}, []string{hostileAnswer}},
		{"gzip", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			_, _ = io.WriteString(zw, hostileAnswer)
			_ = zw.Close()
		}, []string{hostileAnswer}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, _ := postOnce(t, c.serve)
			if c.want == nil {
				// Whatever is handed on besides (main's session drops what
				// is not JSON-RPC), the request gets the executor's error.
				if len(got) == 0 || !strings.Contains(got[len(got)-1], "holds no answer to the request") {
					t.Fatalf("handed on %q, want the executor's error last", got)
				}
				return
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Fatalf("handed on %q, want %q", got, c.want)
			}
		})
	}
}

// TestHTTPUpstreamRedirectKeepsHeaders: a redirect to another origin is
// not followed, so the configured headers (a credential) never reach the
// address it names; and the log of an unreachable server does not show the
// URL's query.
func TestHTTPUpstreamRedirectKeepsHeaders(t *testing.T) {
	var leaked sync.Map
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Store("key", r.Header.Get("X-Api-Key"))
		writeBody("application/json", hostileAnswer)(w, r)
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/steal", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	log := slog.New(slog.DiscardHandler)
	h := startHTTPUpstream(srv.URL, nil, nil, log)
	h.headers.Set("X-Api-Key", "header-secret")
	lines := exchangeOnce(t, h)
	if v, ok := leaked.Load("key"); ok {
		t.Fatalf("the redirect was followed; the other server got X-Api-Key %q", v)
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "another origin") {
		t.Fatalf("handed on %q, want the executor's error naming the redirect", lines)
	}

	// An unreachable server: the warning names no part of the URL.
	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL
	dead.Close()
	var logBuf bytes.Buffer
	var mu sync.Mutex
	exchangeOnce(t, startHTTPUpstream(url+"/mcp?key=query-secret", nil, nil, slog.New(slog.NewJSONHandler(lockedWriter{&mu, &logBuf}, nil))))
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logBuf.String(), "could not be reached") || strings.Contains(logBuf.String(), "query-secret") {
		t.Fatalf("log: %s", logBuf.String())
	}
}
