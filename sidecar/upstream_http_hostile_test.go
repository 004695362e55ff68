package sidecar

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
	h := startHTTPUpstream(srv.URL+"/mcp?key=query-secret", nil, nil, log)
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
	_ = h.inW.Close()
	logMu.Lock()
	defer logMu.Unlock()
	return lines, logBuf.String()
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

func writeBody(contentType, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		_, _ = io.WriteString(w, body)
	}
}

// TestHTTPUpstreamFraming: each way of framing the one answer hands on
// exactly that answer, one line; what is not one message is handed on as
// nothing (the call then ends by its timeout, judged as any other).
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
		{"json two values on lines", writeBody("application/json", hostileAnswer+"\n"+hostileAnswer), nil},
		{"sse lf", writeBody("text/event-stream", "event: message\ndata: "+hostileAnswer+"\n\n"), []string{hostileAnswer}},
		{"sse crlf", writeBody("text/event-stream", "event: message\r\nid: 1\r\ndata: "+hostileAnswer+"\r\n\r\n"), []string{hostileAnswer}},
		{"sse upper case type", writeBody("Text/Event-Stream; charset=utf-8", "data: "+hostileAnswer+"\n\n"), []string{hostileAnswer}},
		{"sse no space", writeBody("text/event-stream", "data:"+hostileAnswer+"\n\n"), []string{hostileAnswer}},
		{"sse comment and retry", writeBody("text/event-stream", ": keep-alive\nretry: 10\ndata: "+hostileAnswer+"\n\n: bye\n"), []string{hostileAnswer}},
		{"sse data over two lines", writeBody("text/event-stream", "data: "+strings.Replace(split, "\n", "\ndata: ", 1)+"\n\n"), []string{hostileAnswer}},
		{"sse no blank line at the end", writeBody("text/event-stream", "data: "+hostileAnswer), []string{hostileAnswer}},
		{"sse two events", writeBody("text/event-stream", "data: "+hostileAnswer+"\n\ndata: "+hostileAnswer+"\n\n"), []string{hostileAnswer, hostileAnswer}},
		{"sse two values in one event", writeBody("text/event-stream", "data: "+hostileAnswer+"\ndata: "+hostileAnswer+"\n\n"), nil},
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
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Fatalf("handed on %q, want %q", got, c.want)
			}
		})
	}
}

// TestHTTPUpstreamOversized: an event whose data lines never end in a blank
// line, a line that never ends, and a JSON body past the limit are not
// gathered without bound and hand on no message of the server.
func TestHTTPUpstreamOversized(t *testing.T) {
	chunk := strings.Repeat("x", 1<<20)
	for _, c := range []struct {
		name  string
		serve http.HandlerFunc
		error bool   // the request is answered with the executor's error
		log   string // in the log when the reader stopped gathering
	}{
		{"sse data lines without end", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			for i := 0; i <= wire.MaxLine>>20; i++ {
				if _, err := io.WriteString(w, "data: "+chunk+"\n"); err != nil {
					return
				}
			}
			_, _ = io.WriteString(w, "\n")
		}, false, "larger than a message may be"},
		{"sse line without newline", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "data: ")
			for i := 0; i <= wire.MaxLine>>20; i++ {
				if _, err := io.WriteString(w, chunk); err != nil {
					return
				}
			}
		}, false, ""},
		{"json body past the limit", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":7,"result":{"x":"`)
			for i := 0; i <= wire.MaxLine>>20; i++ {
				if _, err := io.WriteString(w, chunk); err != nil {
					return
				}
			}
			_, _ = io.WriteString(w, `"}}`)
		}, true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, log := postOnce(t, c.serve)
			if !strings.Contains(log, c.log) {
				t.Fatalf("log %s, want %q", log, c.log)
			}
			if c.error {
				if len(got) != 1 || !strings.Contains(got[0], "larger than a message may be") || !strings.Contains(got[0], `"id":7`) {
					t.Fatalf("handed on %d lines, want the executor's error: %.200q", len(got), got)
				}
				return
			}
			if len(got) != 0 {
				t.Fatalf("handed on %d lines of %d bytes", len(got), len(got[0]))
			}
		})
	}
}

// TestHTTPUpstreamRedirectKeepsHeaders: a redirect is not followed, so the
// configured headers (a credential) never reach the address it names; and
// the log of an unreachable server does not show the URL's query.
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
	m, _ := wire.Inspect(hostileRequest)
	h.post(hostileRequest, m, false)
	h.cancel()
	h.end()
	<-read
	_ = h.inW.Close()
	if v, ok := leaked.Load("key"); ok {
		t.Fatalf("the redirect was followed; the other server got X-Api-Key %q", v)
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "307") {
		t.Fatalf("handed on %q, want the executor's error naming the 307", lines)
	}

	// An unreachable server: the warning names no part of the URL.
	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL
	dead.Close()
	var logBuf bytes.Buffer
	var mu sync.Mutex
	h = startHTTPUpstream(url+"/mcp?key=query-secret", nil, nil, slog.New(slog.NewJSONHandler(lockedWriter{&mu, &logBuf}, nil)))
	go func() { _, _ = io.Copy(io.Discard, h.Output()) }()
	h.post(hostileRequest, m, false)
	h.cancel()
	h.end()
	_ = h.inW.Close()
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logBuf.String(), "could not be reached") || strings.Contains(logBuf.String(), "query-secret") {
		t.Fatalf("log: %s", logBuf.String())
	}
}

// FuzzHTTPEvents feeds any bytes to the event-stream reader of the HTTP
// upstream: never a panic, and every line handed on is one line (no LF or
// CR in it) no longer than a message may be.
func FuzzHTTPEvents(f *testing.F) {
	f.Add([]byte("event: message\ndata: " + hostileAnswer + "\n\n"))
	f.Add([]byte("data: {\"a\":\ndata: 1}\r\n\r\n: c\nid: 2\n\ndata: x"))
	f.Add([]byte("data:\n\ndata: \r\n\r\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		h := &httpUpstream{log: slog.New(slog.DiscardHandler), done: make(chan struct{})}
		h.out, h.ow = io.Pipe()
		h.w = wire.NewWriter(h.ow)
		var lines [][]byte
		read := make(chan struct{})
		go func() {
			defer close(read)
			data, _ := io.ReadAll(h.out)
			lines = bytes.Split(data, []byte("\n"))
		}()
		h.readEvents(bytes.NewReader(body), false)
		h.end()
		<-read
		for _, line := range lines {
			if bytes.ContainsRune(line, '\r') || len(line) > wire.MaxLine {
				t.Fatalf("handed on %q", line)
			}
		}
	})
}
