package upstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode"

	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// These tests put the HTTP upstream in front of Go HTTP servers over real
// sockets. The servers are written here, not real MCP servers, because
// what they test is a server that breaks the transport's rules (a wrong
// id, an oversized answer, a redirect away, a certificate that does not
// verify), which no real server does on purpose; the well-behaved path
// against a real server (the everything server in streamable HTTP mode,
// which answers with event streams) is TestMultiServersHTTP.

// httpPeer is an httpUpstream and the lines of its output.
type httpPeer struct {
	h     *httpUpstream
	lines chan []byte
	ended chan struct{}
}

func startHTTPPeer(t *testing.T, url string, client *http.Client) *httpPeer {
	t.Helper()
	h := startHTTPUpstream(url, []settings.EnvVar{{Name: "Authorization"}}, map[string]string{"Authorization": "Bearer t0ken"},
		slog.New(slog.DiscardHandler))
	if client != nil {
		client.CheckRedirect = h.client.CheckRedirect
		h.client = client
	}
	p := &httpPeer{h: h, lines: make(chan []byte, 16), ended: make(chan struct{})}
	go func() {
		defer close(p.ended)
		rd := wire.NewReader(h.Output())
		for {
			ln, err := rd.ReadLine()
			if err != nil {
				return
			}
			p.lines <- ln
		}
	}()
	t.Cleanup(func() { p.stop(t) })
	return p
}

func (p *httpPeer) send(t *testing.T, line string) {
	t.Helper()
	m, err := wire.Inspect([]byte(line))
	if err != nil {
		t.Fatalf("the test sends a line that is no message: %v\n%s", err, line)
	}
	if err := p.h.Send([]byte(line), m); err != nil {
		t.Fatal(err)
	}
}

// next is the next line of the output (the test fails after 20 s without one).
func (p *httpPeer) next(t *testing.T) string {
	t.Helper()
	select {
	case ln := <-p.lines:
		return string(ln)
	case <-time.After(20 * time.Second):
		t.Fatal("no line from the HTTP upstream within 20s")
		return ""
	}
}

// stop ends the upstream and returns the lines it wrote that were not
// read yet.
func (p *httpPeer) stop(t *testing.T) []string {
	t.Helper()
	if err := p.h.Stop(t.Context()); err != nil {
		t.Error(err)
	}
	select {
	case <-p.ended:
	case <-time.After(20 * time.Second):
		t.Fatal("the HTTP upstream's output did not end within 20s of Stop")
	}
	var rest []string
	for {
		select {
		case ln := <-p.lines:
			rest = append(rest, string(ln))
		default:
			return rest
		}
	}
}

// errorMessage is the message of a JSON-RPC error line under id, or "".
func errorMessage(t *testing.T, line, id string) string {
	t.Helper()
	var m struct {
		ID    string `json:"id"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	if m.Error == nil || m.ID != id {
		return ""
	}
	return m.Error.Message
}

const (
	httpInit = `{"jsonrpc":"2.0","id":"x-0","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	httpCall = `{"jsonrpc":"2.0","id":"x-1","method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`
)

// An initialize answered as JSON names the session; a call answered with
// an event stream (a comment, a notification first, the answer
// pretty-printed over several data lines, CRLF line ends) reaches the
// session as one line a message; later requests carry the session id,
// the protocol version and the headers; Stop ends the session (DELETE).
func TestHTTPUpstreamEventStreamAndSession(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	notified := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.WriteHeader(http.StatusMethodNotAllowed) // no stream of its own (TestHTTPUpstreamOwnStream)
			return
		}
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, r.Method+" session="+r.Header.Get("Mcp-Session-Id")+" version="+r.Header.Get("Mcp-Protocol-Version")+
			" auth="+r.Header.Get("Authorization"))
		mu.Unlock()
		switch {
		case r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusOK)
		case strings.Contains(string(body), `"initialize"`):
			w.Header().Set("Mcp-Session-Id", "s-1")
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":"x-0","result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`)
		case strings.Contains(string(body), `"notifications/initialized"`):
			w.WriteHeader(http.StatusAccepted)
			close(notified)
		default:
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, ": keep-alive\r\n\r\nevent: message\r\nid: 1\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\r\n\r\n"+
				"event: message\r\nid: 2\r\ndata: {\"jsonrpc\": \"2.0\",\r\ndata:  \"id\": \"x-1\",\r\ndata: \"result\": {\"content\": [{\"type\":\"text\",\"text\":\"hi\"}]}}\r\n\r\n")
		}
	}))
	defer srv.Close()
	p := startHTTPPeer(t, srv.URL, nil)
	p.send(t, httpInit)
	if got := p.next(t); !strings.Contains(got, `"serverInfo"`) {
		t.Fatalf("initialize answered %s", got)
	}
	p.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.send(t, httpCall)
	if got := p.next(t); got != `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}` {
		t.Fatalf("first event: %s", got)
	}
	if got := p.next(t); got != `{"jsonrpc":"2.0","id":"x-1","result":{"content":[{"type":"text","text":"hi"}]}}` {
		t.Fatalf("the answer: %s", got)
	}
	// The notification is posted beside the call (Stop would cancel it).
	select {
	case <-notified:
	case <-time.After(20 * time.Second):
		t.Fatal("the notification did not reach the server within 20s")
	}
	if rest := p.stop(t); len(rest) != 0 {
		t.Fatalf("more lines: %q", rest)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{
		"POST session= version= auth=Bearer t0ken",
		"POST session=s-1 version=2025-06-18 auth=Bearer t0ken",
		"POST session=s-1 version=2025-06-18 auth=Bearer t0ken",
		"DELETE session=s-1 version=2025-06-18 auth=Bearer t0ken",
	}
	// The notification and the call are posted together; their order is not fixed.
	if len(seen) != len(want) || seen[0] != want[0] || seen[1] != want[1] || seen[2] != want[2] || seen[3] != want[3] {
		t.Fatalf("the server saw\n%s\nwant\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
}

// A server that breaks the rules never leaves a request waiting: the
// request gets the executor's error as soon as the answer ends, naming
// what went wrong; what the server did send goes on (the session drops an
// answer under another id and reads a malformed one itself).
func TestHTTPUpstreamHostileServers(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":"x-1","result":{"t":"` + strings.Repeat("a", wire.MaxLine) + `"}}`
	for _, c := range []struct {
		name    string
		init    bool // initialize first (the server names session s-1)
		handle  func(w http.ResponseWriter, r *http.Request)
		passed  []string // the lines handed on before the error
		errText string   // in the executor's error for x-1; "" for none
	}{
		{"an answer under another id", false, jsonAnswer(`{"jsonrpc":"2.0","id":"x-2","result":{}}`),
			[]string{`{"jsonrpc":"2.0","id":"x-2","result":{}}`}, "holds no answer to the request"},
		{"a number id for a text id", false, jsonAnswer(`{"jsonrpc":"2.0","id":1,"result":{}}`),
			[]string{`{"jsonrpc":"2.0","id":1,"result":{}}`}, "holds no answer to the request"},
		{"an event stream that ends without the answer", false, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n")
		}, []string{`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`}, "holds no answer to the request"},
		{"a duplicate member (the session's to read)", false, jsonAnswer(`{"jsonrpc":"2.0","id":"x-1","result":{"a":1,"a":2}}`),
			[]string{`{"jsonrpc":"2.0","id":"x-1","result":{"a":1,"a":2}}`}, ""},
		{"a duplicate id member", false, jsonAnswer(`{"jsonrpc":"2.0","id":"x-1","id":"x-1","result":{}}`),
			[]string{`{"jsonrpc":"2.0","id":"x-1","id":"x-1","result":{}}`}, "holds no answer to the request"},
		{"a body that is not JSON", false, jsonAnswer("<html>\n<body>oops</body>\n</html>"), nil, "holds no answer to the request"},
		{"an empty body", false, jsonAnswer(""), nil, "holds no answer to the request"},
		{"a body over 16 MiB", false, jsonAnswer(big), nil, "over 16 MiB"},
		{"an event over 16 MiB", false, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "data: "+big+"\n\n")
		}, nil, "over 16 MiB"},
		{"202 for a request", false, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) },
			nil, "accepted the request without answering it"},
		{"500", false, func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", http.StatusInternalServerError) },
			nil, "answered 500 Internal Server Error"},
		{"404 without a session", false, http.NotFound, nil, "answered 404 Not Found"},
		{"400 with a JSON-RPC error (as the everything server says of a session it does not know)", true, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid\nsession ID provided"},"id":null}`)
		}, nil, "answered 400 Bad Request (it says: Bad Request: No valid session ID provided)"},
		{"400 whose error message is long", false, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":{"message":"`+strings.Repeat("é", 300)+`"}}`)
		}, nil, "answered 400 Bad Request (it says: " + strings.Repeat("é", 200) + "…)"},
		{"404 to a request under a session", true, http.NotFound, nil, "no longer knows the session (HTTP 404): it expired or the server restarted; this request was not sent again; the executor begins a new session"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				switch {
				case r.Method == http.MethodDelete:
					w.WriteHeader(http.StatusOK)
				case strings.Contains(string(body), `"initialize"`):
					w.Header().Set("Mcp-Session-Id", "s-1")
					jsonAnswer(`{"jsonrpc":"2.0","id":"x-0","result":{"protocolVersion":"2025-06-18"}}`)(w, r)
				default:
					c.handle(w, r)
				}
			}))
			defer srv.Close()
			p := startHTTPPeer(t, srv.URL, nil)
			if c.init {
				p.send(t, httpInit)
				p.next(t)
			}
			p.send(t, httpCall)
			for _, want := range c.passed {
				if got := p.next(t); got != want {
					t.Fatalf("handed on %s, want %s", got, want)
				}
			}
			if c.errText == "" {
				if rest := p.stop(t); len(rest) != 0 {
					t.Fatalf("more lines after the server's: %q", rest)
				}
				return
			}
			got := p.next(t)
			if msg := errorMessage(t, got, "x-1"); !strings.Contains(msg, c.errText) {
				t.Fatalf("got %.300s, want an error for x-1 saying %q", got, c.errText)
			}
			if rest := p.stop(t); len(rest) != 0 {
				t.Fatalf("more lines after the error: %.300q", rest)
			}
		})
	}
}

func jsonAnswer(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	}
}

// A redirect is followed within the URL's origin, headers and body kept;
// a redirect to another origin (another port of the same host is one) is
// not followed, so the other server never sees the headers; nor is one
// that would turn the POST into a GET.
func TestHTTPUpstreamRedirects(t *testing.T) {
	var otherHits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHits.Add(1)
		jsonAnswer(`{"jsonrpc":"2.0","id":"x-1","result":{"stolen":"`+r.Header.Get("Authorization")+`"}}`)(w, r)
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
		case "/here":
			http.Redirect(w, r, "/mcp", http.StatusPermanentRedirect)
		case "/found":
			http.Redirect(w, r, "/mcp", http.StatusFound)
		case "/mcp":
			body, _ := io.ReadAll(r.Body)
			if r.Header.Get("Authorization") != "Bearer t0ken" || !strings.Contains(string(body), `"x-1"`) {
				http.Error(w, "headers or body lost", http.StatusBadRequest)
				return
			}
			jsonAnswer(`{"jsonrpc":"2.0","id":"x-1","result":{}}`)(w, r)
		}
	}))
	defer srv.Close()

	p := startHTTPPeer(t, srv.URL+"/here", nil)
	p.send(t, httpCall)
	if got := p.next(t); got != `{"jsonrpc":"2.0","id":"x-1","result":{}}` {
		t.Fatalf("a redirect within the origin: %s", got)
	}

	p = startHTTPPeer(t, srv.URL+"/away", nil)
	p.send(t, httpCall)
	got := p.next(t)
	if msg := errorMessage(t, got, "x-1"); !strings.Contains(msg, "redirected the request to another origin") {
		t.Fatalf("a redirect to another origin: %s", got)
	}
	if n := otherHits.Load(); n != 0 {
		t.Fatalf("the other origin was asked %d times", n)
	}

	p = startHTTPPeer(t, srv.URL+"/found", nil)
	p.send(t, httpCall)
	got = p.next(t)
	if msg := errorMessage(t, got, "x-1"); !strings.Contains(msg, "turns it into a GET") {
		t.Fatalf("a 302 (POST to GET): %s", got)
	}
}

// A certificate that does not verify (the test server's own, which the
// system's roots do not hold) is refused; the same server is reached once
// its certificate is trusted.
func TestHTTPUpstreamTLS(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		jsonAnswer(`{"jsonrpc":"2.0","id":"x-1","result":{}}`)(w, r)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake
	srv.StartTLS()
	defer srv.Close()

	p := startHTTPPeer(t, srv.URL, nil)
	p.send(t, httpCall)
	got := p.next(t)
	if msg := errorMessage(t, got, "x-1"); !strings.Contains(msg, "TLS certificate did not verify") {
		t.Fatalf("an unverified certificate: %s", got)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the server was asked %d times over an unverified connection", n)
	}

	p = startHTTPPeer(t, srv.URL, srv.Client())
	p.send(t, httpCall)
	if got := p.next(t); got != `{"jsonrpc":"2.0","id":"x-1","result":{}}` {
		t.Fatalf("with the certificate trusted: %s", got)
	}
}

func TestUnreachableText(t *testing.T) {
	for err, want := range map[error]string{
		errors.New("dial tcp: connection refused"):            "could not be reached",
		fmt.Errorf("Post: %w (to https://b)", errCrossOrigin): "another origin",
	} {
		if got := unreachable(err); !strings.Contains(got, want) {
			t.Errorf("unreachable(%v) = %q, want %q in it", err, got, want)
		}
	}
}

// A session id with characters other than visible ASCII is refused at
// initialize (it could not be sent back as the transport asks).
func TestHTTPUpstreamBadSessionID(t *testing.T) {
	// (Control characters are refused by Go's HTTP client itself.)
	for _, sid := range []string{"s 1", "s-\u00e9", "s-\u00a0x"} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header()["Mcp-Session-Id"] = []string{sid}
			jsonAnswer(`{"jsonrpc":"2.0","id":"x-0","result":{"protocolVersion":"2025-06-18"}}`)(w, r)
		}))
		p := startHTTPPeer(t, srv.URL, nil)
		p.send(t, httpInit)
		got := p.next(t)
		if msg := errorMessage(t, got, "x-0"); !strings.Contains(msg, "session id (Mcp-Session-Id) holds characters other than visible ASCII") {
			t.Errorf("session id %q: %s", sid, got)
		}
		if rest := p.stop(t); len(rest) != 0 {
			t.Errorf("session id %q: more lines: %q", sid, rest)
		}
		srv.Close()
	}
	if !visibleASCII("a-Z_0~9!") {
		t.Error("visibleASCII refuses visible ASCII")
	}
}

// readEventsOf runs readEvents on body and returns the lines handed on.
func readEventsOf(body []byte) ([]string, error) {
	var out strings.Builder
	h := &httpUpstream{log: slog.New(slog.DiscardHandler)}
	h.w = wire.NewWriter(&out)
	err := h.readEvents(strings.NewReader(string(body)), false, func([]byte) {})
	text := strings.TrimSuffix(out.String(), "\n")
	if text == "" {
		return nil, err
	}
	return strings.Split(text, "\n"), err
}

// The event-stream reader: each event's data lines joined make one
// message; comments, other fields, CR LF ends and a last event without its
// blank line are read as the format says; a message over several data
// lines (pretty-printed) is handed on compact; data that is not JSON and
// spans lines is dropped.
func TestReadEvents(t *testing.T) {
	for _, c := range []struct {
		name, body string
		want       []string
	}{
		{"one event", "data: {\"a\":1}\n\n", []string{`{"a":1}`}},
		{"no space after the colon", "data:{\"a\":1}\n\n", []string{`{"a":1}`}},
		{"comments, ids, event names", ": hi\nevent: message\nid: 7\nretry: 100\ndata: {\"a\":1}\n\n: bye\n\n", []string{`{"a":1}`}},
		{"CR LF", "data: {\"a\":1}\r\n\r\ndata: {\"b\":2}\r\n\r\n", []string{`{"a":1}`, `{"b":2}`}},
		{"several data lines", "data: {\"a\":\ndata:  [1,\ndata: 2]}\n\n", []string{`{"a":[1,2]}`}},
		{"the last event without its blank line", "data: {\"a\":1}\n\ndata: {\"b\":2}", []string{`{"a":1}`, `{"b":2}`}},
		{"an event with no data", "event: ping\n\ndata: {\"a\":1}\n\n", []string{`{"a":1}`}},
		{"not JSON over two lines (dropped)", "data: not\ndata: json\n\ndata: {\"a\":1}\n\n", []string{`{"a":1}`}},
		{"not JSON on one line (the session's to refuse)", "data: oops\n\n", []string{`oops`}},
		{"nothing", "", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := readEventsOf([]byte(c.body))
			if err != nil || strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Fatalf("got %q (%v), want %q", got, err, c.want)
			}
		})
	}
}

// Whatever a server streams, the reader ends, and every line it hands on
// is one line of at most 16 MiB; messages written one an event come back
// as they were.
func FuzzReadEvents(f *testing.F) {
	for _, s := range []string{"data: {\"a\":1}\n\n", "data:\ndata:\n\n", ": c\r\n\r\n", "data: {\"a\":\r\ndata: 1}\r\n", "data", "\n\n\n", "data: \"x\ny\"\n\n"} {
		f.Add([]byte(s), `{"jsonrpc":"2.0","id":"x-1","result":{}}`)
	}
	f.Fuzz(func(t *testing.T, body []byte, msg string) {
		got, _ := readEventsOf(body)
		for _, ln := range got {
			if strings.ContainsAny(ln, "\r\n") || len(ln) > wire.MaxLine {
				t.Fatalf("handed on %q", ln)
			}
		}
		if !json.Valid([]byte(msg)) || strings.ContainsAny(msg, "\r\n") || strings.TrimSpace(msg) != msg || msg == "" {
			return
		}
		got, err := readEventsOf([]byte("data: " + msg + "\n\n: between\n\ndata: " + msg + "\n\n"))
		if err != nil || len(got) != 2 || got[0] != msg || got[1] != msg {
			t.Fatalf("%q: got %q (%v)", msg, got, err)
		}
	})
}

// The message of an HTTP error's body is printable and at most 200
// characters (and an ellipsis), whatever the body.
func FuzzErrorBodyMessage(f *testing.F) {
	for _, s := range []string{`{"error":{"message":"Bad Request: No valid session ID provided"}}`, `{"error":{"message":"a\nb\u0000c"}}`, `{"error":1}`, `[]`, ``, `{"error":{"message":"` + strings.Repeat("x", 300) + `"}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		msg := errorBodyMessage(strings.NewReader(body))
		if n := len([]rune(msg)); n > 201 {
			t.Fatalf("%d characters", n)
		}
		for _, r := range msg {
			if !unicode.IsPrint(r) {
				t.Fatalf("%q holds %U", msg, r)
			}
		}
	})
}

// forgetfulServer is a streamable-HTTP server that numbers its sessions
// (s-1, s-2, …) and can forget them, as a server that restarted or let a
// session expire does. It is a Go server, not a real MCP server, because
// the test needs to forget a session at a chosen moment, see each POST as
// it came (headers and body) and answer every session's end in the
// transport's way (404) or as the TypeScript SDK's example does (400);
// TestMultiServersHTTPServerRestart does the same with the real everything
// server restarted behind the binary.
type forgetfulServer struct {
	mu       sync.Mutex
	sessions int             // sessions begun
	live     map[string]bool // session ids it knows
	seen     []string        // "<method> session=<id> version=<v> body=<body>" for each request
	status   int             // what it answers a session it does not know (404 or 400)
	forgetAt bool            // forget every session right after its initialize
	protocol string          // the version it agrees to ("" for what the client asks)
}

func (f *forgetfulServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		w.WriteHeader(http.StatusMethodNotAllowed) // no stream of its own (TestHTTPUpstreamOwnStream)
		return
	}
	body, _ := io.ReadAll(r.Body)
	sid := r.Header.Get("Mcp-Session-Id")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen = append(f.seen, r.Method+" session="+sid+" version="+r.Header.Get("Mcp-Protocol-Version")+" body="+string(body))
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &m)
	switch {
	case r.Method == http.MethodDelete:
		delete(f.live, sid)
		w.WriteHeader(http.StatusOK)
	case m.Method == "initialize" && sid == "":
		f.sessions++
		sid = "s-" + strconv.Itoa(f.sessions)
		if !f.forgetAt {
			f.live[sid] = true
		}
		v := f.protocol
		if v == "" {
			v = m.Params.ProtocolVersion
		}
		w.Header().Set("Mcp-Session-Id", sid)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"protocolVersion\":%q,\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"f\",\"version\":\"1\"}}}\n\n", m.ID, v)
	case !f.live[sid]:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.status)
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}`)
	case m.ID == nil:
		w.WriteHeader(http.StatusAccepted)
	default:
		jsonAnswer(`{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"content":[{"type":"text","text":"in `+sid+`"}]}}`)(w, r)
	}
}

func (f *forgetfulServer) forget() {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.live)
}

// requests is what the server saw, and forgets it.
func (f *forgetfulServer) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.seen
	f.seen = nil
	return out
}

func callLine(id string) string {
	return `{"jsonrpc":"2.0","id":"` + id + `","method":"tools/call","params":{"name":"echo","arguments":{}}}`
}

// A server that forgot the session (404, or 400 naming the session): the
// request that met the end gets its error and is not sent again; the next
// request first begins a new session (the first initialize's params, the
// protocol version agreed then, no session id; then
// notifications/initialized under the new id), none of which reaches the
// session, and then goes through under the new session.
func TestHTTPUpstreamNewSession(t *testing.T) {
	for _, status := range []int{http.StatusNotFound, http.StatusBadRequest} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			f := &forgetfulServer{live: map[string]bool{}, status: status}
			srv := httptest.NewServer(f)
			defer srv.Close()
			p := startHTTPPeer(t, srv.URL, nil)
			p.send(t, httpInit)
			p.next(t)
			p.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			p.send(t, callLine("x-1"))
			if got := p.next(t); !strings.Contains(got, `"in s-1"`) {
				t.Fatalf("x-1: %s", got)
			}
			f.requests()
			f.forget()
			p.send(t, callLine("x-2"))
			if msg := errorMessage(t, p.next(t), "x-2"); !strings.Contains(msg, "this request was not sent again; the executor begins a new session for the next one") {
				t.Fatalf("x-2: %q", msg)
			}
			p.send(t, callLine("x-3"))
			if got := p.next(t); got != `{"jsonrpc":"2.0","id":"x-3","result":{"content":[{"type":"text","text":"in s-2"}]}}` {
				t.Fatalf("x-3: %s", got)
			}
			want := []string{
				`POST session=s-1 version=2025-06-18 body=` + callLine("x-2"),
				`POST session= version= body={"jsonrpc":"2.0","id":"mcp-executor-session-1","method":"initialize","params":{"capabilities":{},"clientInfo":{"name":"t","version":"1"},"protocolVersion":"2025-06-18"}}`,
				`POST session=s-2 version=2025-06-18 body={"jsonrpc":"2.0","method":"notifications/initialized"}`,
				`POST session=s-2 version=2025-06-18 body=` + callLine("x-3"),
			}
			var got []string
			for _, r := range f.requests() {
				// The first notifications/initialized is posted beside x-1;
				// it may come after x-1's answer.
				if r != `POST session=s-1 version=2025-06-18 body={"jsonrpc":"2.0","method":"notifications/initialized"}` {
					got = append(got, r)
				}
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("the server saw\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if rest := p.stop(t); len(rest) != 0 {
				t.Fatalf("more lines: %q", rest)
			}
		})
	}
}

// A server that ends every session before answering a request: the
// executor begins at most maxSessionRenewals new sessions in a row, then
// sends no more and says to restart it.
func TestHTTPUpstreamNewSessionBounded(t *testing.T) {
	f := &forgetfulServer{live: map[string]bool{}, status: http.StatusNotFound, forgetAt: true}
	srv := httptest.NewServer(f)
	defer srv.Close()
	p := startHTTPPeer(t, srv.URL, nil)
	p.send(t, httpInit)
	p.next(t)
	for i := range maxSessionRenewals + 1 {
		id := "x-" + strconv.Itoa(i+1)
		p.send(t, callLine(id))
		want := "the executor begins a new session for the next one"
		if i == maxSessionRenewals {
			want = "the executor began 3 new sessions in a row and the server ended each before answering a request, so it begins no more: restart the executor"
		}
		if msg := errorMessage(t, p.next(t), id); !strings.Contains(msg, want) {
			t.Fatalf("%s: %q, want %q", id, msg, want)
		}
	}
	p.send(t, callLine("x-9"))
	if msg := errorMessage(t, p.next(t), "x-9"); !strings.Contains(msg, "session ended: the executor began 3 new sessions in a row") {
		t.Fatalf("x-9: %q", msg)
	}
	inits, calls := 0, 0
	for _, r := range f.requests() {
		switch {
		case strings.Contains(r, `"initialize"`):
			inits++
		case strings.Contains(r, `"tools/call"`):
			calls++
		}
	}
	if inits != 1+maxSessionRenewals || calls != 1+maxSessionRenewals {
		t.Fatalf("%d initializes and %d calls posted, want %d of each", inits, calls, 1+maxSessionRenewals)
	}
}

// A new session is not begun when the server now agrees to another
// protocol version, nor when it cannot be reached: the request that asked
// for it ends with that error, not sent; a request answered later begins
// the count afresh.
func TestHTTPUpstreamNewSessionRefused(t *testing.T) {
	f := &forgetfulServer{live: map[string]bool{}, status: http.StatusNotFound}
	srv := httptest.NewServer(f)
	defer srv.Close()
	p := startHTTPPeer(t, srv.URL, nil)
	p.send(t, httpInit)
	p.next(t)
	f.forget()
	p.send(t, callLine("x-1"))
	p.next(t)
	f.mu.Lock()
	f.protocol = "2099-01-01"
	f.mu.Unlock()
	p.send(t, callLine("x-2"))
	if msg := errorMessage(t, p.next(t), "x-2"); !strings.Contains(msg, `a new one could not be begun, so this request was not sent: it now agrees to protocol version "2099-01-01" where the session began with "2025-06-18"`) {
		t.Fatalf("x-2: %q", msg)
	}
	f.mu.Lock()
	f.protocol = ""
	f.mu.Unlock()
	p.send(t, callLine("x-3"))
	if got := p.next(t); !strings.Contains(got, `"in s-3"`) {
		t.Fatalf("x-3: %s", got)
	}
	for _, r := range f.requests() {
		if strings.Contains(r, `"x-2"`) {
			t.Fatalf("x-2 was posted: %s", r)
		}
	}
}

// heldServer holds the POST of request x-2 until release is closed, then
// serves it as next does.
type heldServer struct {
	next    http.Handler
	arrived chan struct{}
	release chan struct{}
}

func (h *heldServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if strings.Contains(string(body), `"id":"x-2"`) {
		close(h.arrived)
		<-h.release
	}
	r.Body = io.NopCloser(strings.NewReader(string(body)))
	h.next.ServeHTTP(w, r)
}

// A new session does not wait for a request in flight under the old one;
// when that request then meets the old session's end, the new session
// stands (no second one is begun).
func TestHTTPUpstreamNewSessionInFlight(t *testing.T) {
	f := &forgetfulServer{live: map[string]bool{}, status: http.StatusNotFound}
	held := &heldServer{next: f, arrived: make(chan struct{}), release: make(chan struct{})}
	srv := httptest.NewServer(held)
	defer srv.Close()
	p := startHTTPPeer(t, srv.URL, nil)
	p.send(t, httpInit)
	p.next(t)
	p.send(t, callLine("x-2"))
	select {
	case <-held.arrived:
	case <-time.After(20 * time.Second):
		t.Fatal("x-2 did not reach the server within 20s")
	}
	f.forget()
	p.send(t, callLine("x-3"))
	if msg := errorMessage(t, p.next(t), "x-3"); !strings.Contains(msg, "begins a new session for the next one") {
		t.Fatalf("x-3: %q", msg)
	}
	p.send(t, callLine("x-4"))
	if got := p.next(t); !strings.Contains(got, `"in s-2"`) {
		t.Fatalf("x-4: %s", got)
	}
	close(held.release)
	if msg := errorMessage(t, p.next(t), "x-2"); !strings.Contains(msg, "no longer knows the session (HTTP 404)") {
		t.Fatalf("x-2: %q", msg)
	}
	p.send(t, callLine("x-5"))
	if got := p.next(t); !strings.Contains(got, `"in s-2"`) {
		t.Fatalf("x-5: %s", got)
	}
	inits := 0
	for _, r := range f.requests() {
		if strings.Contains(r, `"initialize"`) {
			inits++
		}
	}
	if inits != 2 {
		t.Fatalf("%d initializes posted, want 2", inits)
	}
}

// streamServer is a streamable-HTTP server with a GET stream of its own
// that sends events (then ends, or is held open until the client goes) or
// answers GET with getStatus. A Go server, because the test needs a stream
// that also carries what the transport forbids on it (an answer, and a
// malformed line under an id).
type streamServer struct {
	mu        sync.Mutex
	gets      []string // "session=<id> version=<v> accept=<a> auth=<a>" of each GET
	getStatus int      // 0: an event stream
	events    string
	hold      bool
}

func (s *streamServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	switch {
	case r.Method == http.MethodGet:
		s.mu.Lock()
		s.gets = append(s.gets, "session="+r.Header.Get("Mcp-Session-Id")+" version="+r.Header.Get("Mcp-Protocol-Version")+
			" accept="+r.Header.Get("Accept")+" auth="+r.Header.Get("Authorization"))
		s.mu.Unlock()
		if s.getStatus != 0 {
			w.WriteHeader(s.getStatus)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, s.events)
		w.(http.Flusher).Flush()
		if s.hold {
			<-r.Context().Done()
		}
	case r.Method == http.MethodDelete:
		w.WriteHeader(http.StatusOK)
	case strings.Contains(string(body), `"initialize"`):
		w.Header().Set("Mcp-Session-Id", "s-1")
		jsonAnswer(`{"jsonrpc":"2.0","id":"x-0","result":{"protocolVersion":"2025-06-18"}}`)(w, r)
	case strings.Contains(string(body), `"notifications/initialized"`):
		w.WriteHeader(http.StatusAccepted)
	default:
		jsonAnswer(`{"jsonrpc":"2.0","id":"x-1","result":{"content":[]}}`)(w, r)
	}
}

func (s *streamServer) getsSeen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.gets...)
}

// Once the session is ready the GET stream is opened under the session id,
// protocol version and headers; the server's own requests and
// notifications on it reach the session as a stdio server's lines do,
// while an answer (and a malformed line under an id) is dropped, the
// transport allowing none there; Stop ends the stream held open.
func TestHTTPUpstreamOwnStream(t *testing.T) {
	s := &streamServer{hold: true, events: "data: {\"jsonrpc\":\"2.0\",\"id\":\"x-1\",\"result\":{}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":\"x-1\",\"result\":{\"a\":1,\"a\":2}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"roots/list\"}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"hi\"}}\n\n"}
	srv := httptest.NewServer(s)
	defer srv.Close()
	p := startHTTPPeer(t, srv.URL, nil)
	p.send(t, httpInit)
	p.next(t)
	p.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if got := p.next(t); got != `{"jsonrpc":"2.0","id":7,"method":"roots/list"}` {
		t.Fatalf("first line of the stream handed on: %s", got)
	}
	if got := p.next(t); got != `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}` {
		t.Fatalf("second line of the stream handed on: %s", got)
	}
	p.send(t, httpCall)
	if got := p.next(t); got != `{"jsonrpc":"2.0","id":"x-1","result":{"content":[]}}` {
		t.Fatalf("the call: %s", got)
	}
	if rest := p.stop(t); len(rest) != 0 {
		t.Fatalf("more lines: %q", rest)
	}
	if got := s.getsSeen(); len(got) != 1 || got[0] != "session=s-1 version=2025-06-18 accept=text/event-stream auth=Bearer t0ken" {
		t.Fatalf("the GETs: %q", got)
	}
}

// A server that offers no stream (405), refuses it, or ends it: the
// stream is asked for once, and calls go on as before.
func TestHTTPUpstreamOwnStreamRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		s    *streamServer
	}{
		{"405", &streamServer{getStatus: http.StatusMethodNotAllowed}},
		{"400", &streamServer{getStatus: http.StatusBadRequest}},
		{"ended", &streamServer{events: "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(c.s)
			defer srv.Close()
			p := startHTTPPeer(t, srv.URL, nil)
			p.send(t, httpInit)
			p.next(t)
			p.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			if c.name == "ended" {
				if got := p.next(t); !strings.Contains(got, "notifications/message") {
					t.Fatalf("the stream's line: %s", got)
				}
			}
			for range 2 {
				p.send(t, httpCall)
				if got := p.next(t); got != `{"jsonrpc":"2.0","id":"x-1","result":{"content":[]}}` {
					t.Fatalf("the call: %s", got)
				}
			}
			// The stream is opened beside the calls, not before them: wait
			// for its GET (then that no second one follows by the stop).
			deadline := time.Now().Add(10 * time.Second)
			for len(c.s.getsSeen()) == 0 {
				if time.Now().After(deadline) {
					t.Fatal("the executor never opened the server's own stream")
				}
				time.Sleep(5 * time.Millisecond)
			}
			if rest := p.stop(t); len(rest) != 0 {
				t.Fatalf("more lines: %q", rest)
			}
			if got := c.s.getsSeen(); len(got) != 1 {
				t.Fatalf("%d GETs, want 1: %q", len(got), got)
			}
		})
	}
}

// A second initialize of the client's begins a session afresh: it is sent
// without the session id, so a server's 404 to it is no session's end.
func TestHTTPUpstreamSecondInitialize(t *testing.T) {
	f := &forgetfulServer{live: map[string]bool{}, status: http.StatusNotFound}
	srv := httptest.NewServer(f)
	defer srv.Close()
	p := startHTTPPeer(t, srv.URL, nil)
	p.send(t, httpInit)
	p.next(t)
	f.forget()
	p.send(t, httpInit)
	if got := p.next(t); !strings.Contains(got, `"result"`) {
		t.Fatalf("the second initialize: %s", got)
	}
	p.send(t, callLine("x-1"))
	if got := p.next(t); !strings.Contains(got, `"in s-2"`) {
		t.Fatalf("x-1: %s", got)
	}
	for _, r := range f.requests() {
		if strings.Contains(r, `"initialize"`) && !strings.HasPrefix(r, "POST session= version= ") {
			t.Fatalf("an initialize was sent under a session: %s", r)
		}
	}
}
