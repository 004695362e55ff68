package streamhttp_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/sidecar"
	"github.com/seed-6e06167c/mcp-executor/sidecar/front/streamhttp"
)

const initBody = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`

// copyLines is how many lines the executor's copy holds (every judged call writes one or more).
func copyLines(t *testing.T, tf *testFront) int {
	t.Helper()
	b, err := os.ReadFile(tf.env.CopyPath)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// Host and Origin of another site are refused before anything else: 403, no session starts.
func TestOtherSitesAreRefused(t *testing.T) {
	t.Parallel()
	tf := newFront(t, frontSetup{})
	cases := []struct {
		name    string
		host    string
		headers map[string][]string
		status  int
	}{
		{"Host of another site", "evil.example.com", nil, http.StatusForbidden},
		{"Host of another port", "127.0.0.1:1", nil, http.StatusForbidden},
		{"Host of a rebinding name", "localhost.evil.example:" + strings.Split(tf.host, ":")[1], nil, http.StatusForbidden},
		{"Origin of another site", "", map[string][]string{"Origin": {"http://evil.example.com"}}, http.StatusForbidden},
		{"Origin null", "", map[string][]string{"Origin": {"null"}}, http.StatusForbidden},
		{"Origin over https", "", map[string][]string{"Origin": {"https://" + tf.host}}, http.StatusForbidden},
		{"Origin with a path", "", map[string][]string{"Origin": {"http://" + tf.host + "/x"}}, http.StatusForbidden},
		{"two Origins", "", map[string][]string{"Origin": {"http://" + tf.host, "http://evil.example.com"}}, http.StatusBadRequest},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(http.MethodPost, tf.url, strings.NewReader(initBody))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range c.headers {
			req.Header[k] = v
		}
		if c.host != "" {
			req.Host = c.host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(t, resp.Body)
		if resp.StatusCode != c.status || resp.Header.Get("Mcp-Session-Id") != "" {
			t.Errorf("%s: %s %s", c.name, resp.Status, body)
		}
	}
	if n := tf.f.Sessions(); n != 0 {
		t.Fatalf("%d sessions started", n)
	}
	// The endpoint's own names pass: localhost with its port, and an Origin naming it.
	port := strings.Split(tf.host, ":")[1]
	req, _ := http.NewRequest(http.MethodPost, tf.url, strings.NewReader(initBody))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Origin", "http://localhost:"+port)
	req.Host = "localhost:" + port
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if body := readAll(t, resp.Body); resp.StatusCode != http.StatusOK {
		t.Fatalf("localhost: %s %s", resp.Status, body)
	}
}

// Missing, forged and foreign session ids find no session; the session they aimed at goes on.
func TestSessionIDsThatAreNotTheClients(t *testing.T) {
	t.Parallel()
	tokens, err := streamhttp.ParseTokens([]byte("token-of-client-a-0123456789\ntoken-of-client-b-0123456789\n"))
	if err != nil {
		t.Fatal(err)
	}
	tf := newFront(t, frontSetup{opts: func(o *streamhttp.Options) { o.Tokens = tokens }})
	a := map[string][]string{"Authorization": {"Bearer token-of-client-a-0123456789"}}
	resp := tf.do(request{body: initBody, headers: a})
	sid := resp.Header.Get("Mcp-Session-Id")
	_ = answerOf(t, resp)
	if sid == "" {
		t.Fatalf("initialize with token a: %s", resp.Status)
	}
	with := func(extra map[string][]string) map[string][]string {
		h := map[string][]string{"Mcp-Protocol-Version": {"2025-11-25"}}
		for k, v := range extra {
			h[k] = v
		}
		return h
	}
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	cases := []struct {
		name    string
		headers map[string][]string
		status  int
	}{
		{"no token", with(map[string][]string{"Mcp-Session-Id": {sid}}), http.StatusUnauthorized},
		{"an unknown token", with(map[string][]string{"Mcp-Session-Id": {sid}, "Authorization": {"Bearer token-of-nobody-0123456789"}}), http.StatusUnauthorized},
		{"a token of another scheme", with(map[string][]string{"Mcp-Session-Id": {sid}, "Authorization": {"Basic token-of-client-a-0123456789"}}), http.StatusUnauthorized},
		{"two tokens", with(map[string][]string{"Mcp-Session-Id": {sid}, "Authorization": {"Bearer token-of-client-b-0123456789", "Bearer token-of-client-a-0123456789"}}), http.StatusBadRequest},
		{"the session of another token", with(map[string][]string{"Mcp-Session-Id": {sid}, "Authorization": {"Bearer token-of-client-b-0123456789"}}), http.StatusNotFound},
		{"no session id", with(a), http.StatusBadRequest},
		{"a forged session id", with(map[string][]string{"Mcp-Session-Id": {"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}, "Authorization": a["Authorization"]}), http.StatusNotFound},
		{"a session id one letter off", with(map[string][]string{"Mcp-Session-Id": {flip(sid)}, "Authorization": a["Authorization"]}), http.StatusNotFound},
		{"two session ids", with(map[string][]string{"Mcp-Session-Id": {sid, sid}, "Authorization": a["Authorization"]}), http.StatusBadRequest},
		{"a session id with a space", with(map[string][]string{"Mcp-Session-Id": {sid + " x"}, "Authorization": a["Authorization"]}), http.StatusBadRequest},
	}
	for _, c := range cases {
		resp := tf.do(request{body: ping, headers: c.headers})
		body := readAll(t, resp.Body)
		if resp.StatusCode != c.status {
			t.Errorf("%s: %s %s", c.name, resp.Status, body)
		}
		if c.status == http.StatusUnauthorized && resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: no WWW-Authenticate", c.name)
		}
	}
	resp = tf.do(request{body: ping, headers: with(map[string][]string{"Mcp-Session-Id": {sid}, "Authorization": a["Authorization"]})})
	if body := answerOf(t, resp); !strings.Contains(body, `"result":{}`) {
		t.Fatalf("the session after the attempts: %s", body)
	}
}

func flip(s string) string {
	b := []byte(s)
	if b[5] == 'A' {
		b[5] = 'B'
	} else {
		b[5] = 'A'
	}
	return string(b)
}

// An address other than loopback cannot be served without tokens.
func TestOtherAddressesNeedTokens(t *testing.T) {
	t.Parallel()
	u, err := streamhttp.ParseListen("http://0.0.0.0:8080/mcp")
	if err != nil {
		t.Fatal(err)
	}
	_, err = streamhttp.New(streamhttp.Options{Engine: &sidecar.Executor{}, Listen: u})
	if err == nil || !strings.Contains(err.Error(), "token") {
		t.Fatalf("New without tokens on 0.0.0.0: %v", err)
	}
}

// Mcp-Method and Mcp-Name must say what the body says, or the request is refused (400, -32020)
// before anything is judged: nothing is in the copy or the book, and the tool server never saw it.
func TestHeadersThatDisagreeWithTheBody(t *testing.T) {
	t.Parallel()
	tf := newFront(t, frontSetup{})
	before := copyLines(t, tf)
	call := func(name string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","arguments":{"text":"x"},` + modernMeta + `}}`
	}
	h := func(pairs ...string) map[string][]string {
		m := map[string][]string{"Mcp-Protocol-Version": {"2026-07-28"}}
		for i := 0; i+1 < len(pairs); i += 2 {
			m[pairs[i]] = append(m[pairs[i]], pairs[i+1])
		}
		return m
	}
	cases := []struct {
		name    string
		body    string
		headers map[string][]string
		code    string
	}{
		{"Mcp-Name naming another tool", call("big"), h("Mcp-Method", "tools/call", "Mcp-Name", "echo"), "-32020"},
		{"Mcp-Name in another case", call("echo"), h("Mcp-Method", "tools/call", "Mcp-Name", "Echo"), "-32020"},
		{"Mcp-Name in base64 of another tool", call("big"), h("Mcp-Method", "tools/call", "Mcp-Name", "=?base64?ZWNobw==?="), "-32020"},
		{"no Mcp-Name", call("echo"), h("Mcp-Method", "tools/call"), "-32020"},
		{"no Mcp-Method", call("echo"), h("Mcp-Name", "echo"), "-32020"},
		{"Mcp-Method naming another method", call("echo"), h("Mcp-Method", "tools/list", "Mcp-Name", "echo"), "-32020"},
		{"two Mcp-Names", call("echo"), h("Mcp-Method", "tools/call", "Mcp-Name", "echo", "Mcp-Name", "big"), ""},
		{"Mcp-Name spelled Mcp_Name", call("big"), h("Mcp-Method", "tools/call", "Mcp-Name", "big", "Mcp_Name", "echo"), ""},
		{"a body name with an escape another reader may read otherwise", call(`ech\ud800o`), h("Mcp-Method", "tools/call", "Mcp-Name", "echo"), "-32020"},
		{"MCP-Protocol-Version naming another version than _meta", call("echo"), map[string][]string{"Mcp-Protocol-Version": {"2025-11-25"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"echo"}}, "-32020"},
		{"no MCP-Protocol-Version", call("echo"), map[string][]string{"Mcp-Method": {"tools/call"}, "Mcp-Name": {"echo"}, "Mcp-Protocol-Version": {}}, "-32020"},
		{"Mcp-Name on a request that names nothing", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + modernMeta + `}}`, h("Mcp-Method", "tools/list", "Mcp-Name", "echo"), "-32020"},
	}
	for _, c := range cases {
		resp := tf.do(request{body: c.body, headers: c.headers})
		body := readAll(t, resp.Body)
		if resp.StatusCode != http.StatusBadRequest || (c.code != "" && !strings.Contains(body, `"code":`+c.code)) {
			t.Errorf("%s: %s %s", c.name, resp.Status, body)
		}
	}
	if n := copyLines(t, tf); n != before {
		t.Fatalf("the copy holds %d lines: something was judged", n)
	}
	if strings.Contains(tf.log.String(), `"tool server started"`) {
		t.Fatal("a tool server started: a refused request reached the engine")
	}
	// The same request with headers that agree, the name in base64 among them, is served.
	resp := tf.do(request{body: call("echo"), headers: h("Mcp-Method", "tools/call", "Mcp-Name", "=?base64?ZWNobw==?=")})
	if body := answerOf(t, resp); !strings.Contains(body, `"text":"x"`) {
		t.Fatalf("agreeing headers: %s %s", resp.Status, body)
	}
}

// Ids reach no header, and are answered as written: an id whose text holds CR LF and a header.
func TestIDsReachNoHeader(t *testing.T) {
	t.Parallel()
	tf := newFront(t, frontSetup{})
	id := `"x\r\nSet-Cookie: stolen=1\r\n\r\n"`
	resp := tf.do(request{body: `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},` + modernMeta + `}}`,
		headers: modern("tools/call", "echo")})
	body := answerOf(t, resp)
	if resp.Header.Get("Set-Cookie") != "" || len(resp.Header.Values("Set-Cookie")) != 0 {
		t.Fatalf("a header came from the id: %v", resp.Header)
	}
	if !strings.HasPrefix(body, `{"jsonrpc":"2.0","id":`+id+`,`) {
		t.Fatalf("the answer does not carry the id as written: %s", body)
	}
	sid := tf.initialize("2025-11-25")
	resp = tf.do(request{body: `{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`, headers: session(sid, "2025-11-25")})
	body = answerOf(t, resp)
	for k := range resp.Header {
		if !map[string]bool{"Content-Type": true, "Cache-Control": true, "X-Accel-Buffering": true, "Date": true, "Content-Length": true}[k] {
			t.Errorf("header %s in the answer", k)
		}
	}
	if !strings.Contains(body, `"id":`+id) {
		t.Fatalf("ping answered %s", body)
	}
}

// Bodies: over 16 MiB (413), a batch, a line feed inside, a duplicate member, not JSON, another
// content type (415); none reaches the engine.
func TestBodiesThatAreNotOneMessage(t *testing.T) {
	t.Parallel()
	tf := newFront(t, frontSetup{})
	huge := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", 16<<20) + `"}}`
	cases := []struct {
		name   string
		body   string
		ctype  string
		status int
	}{
		{"over 16 MiB", huge, "application/json", http.StatusRequestEntityTooLarge},
		{"a batch", `[` + initBody + `]`, "application/json", http.StatusBadRequest},
		{"a line feed inside", strings.Replace(initBody, `,"method"`, ",\n\"method\"", 1), "application/json", http.StatusBadRequest},
		{"a member twice", strings.Replace(initBody, `"id":0,`, `"id":0,"ID":1,`, 1), "application/json", http.StatusBadRequest},
		{"a name in another case", strings.Replace(initBody, `"clientInfo"`, `"clientinfo":{},"clientInfo"`, 1), "application/json", http.StatusBadRequest},
		{"not JSON", `{"jsonrpc":"2.0",`, "application/json", http.StatusBadRequest},
		{"empty", "", "application/json", http.StatusBadRequest},
		{"text/plain", initBody, "text/plain", http.StatusUnsupportedMediaType},
		{"a charset other than utf-8", initBody, "application/json; charset=latin1", http.StatusUnsupportedMediaType},
	}
	for _, c := range cases {
		resp := tf.do(request{body: c.body, headers: map[string][]string{"Content-Type": {c.ctype}}})
		body := readAll(t, resp.Body)
		if resp.StatusCode != c.status {
			t.Errorf("%s: %s %s", c.name, resp.Status, lastBytes(body, 300))
		}
	}
	if n := tf.f.Sessions(); n != 0 {
		t.Fatalf("%d sessions started", n)
	}
}

// Headers read twice or spelled otherwise, and bytes outside visible ASCII, are refused.
func TestHeadersOfOneReading(t *testing.T) {
	t.Parallel()
	tf := newFront(t, frontSetup{})
	cases := []struct {
		name string
		raw  string // header lines, each ending CRLF
	}{
		{"two Accept headers", "Accept: application/json\r\nAccept: text/event-stream\r\n"},
		{"two Content-Types", "Content-Type: application/json\r\nContent-Type: text/plain\r\n"},
		{"Mcp_Session_Id", "Mcp_Session_Id: abc\r\n"},
		{"mcp-protocol_version", "mcp-protocol_version: 2025-11-25\r\n"},
		{"Mcp_Param_Region", "Mcp_Param_Region: eu\r\n"},
		{"a byte beyond ASCII in Mcp-Name", "Mcp-Name: caf\xc3\xa9\r\n"},
		{"a control byte in Mcp-Method", "Mcp-Method: tools/\x01call\r\n"},
		{"a bad protocol version", "Mcp-Protocol-Version: 2025-11-25x\r\n"},
		{"an unknown protocol version", "Mcp-Protocol-Version: 2024-01-01\r\n"},
	}
	for _, c := range cases {
		status := rawStatus(t, tf, "POST /mcp HTTP/1.1\r\nHost: "+tf.host+"\r\n"+defaultHeaders(c.raw)+c.raw+
			fmt.Sprintf("Content-Length: %d\r\nConnection: close\r\n\r\n%s", len(initBody), initBody))
		if status < 400 || status >= 500 {
			t.Errorf("%s: status %d", c.name, status)
		}
	}
	if n := tf.f.Sessions(); n != 0 {
		t.Fatalf("%d sessions started", n)
	}
}

// defaultHeaders are Content-Type and Accept unless raw sets them.
func defaultHeaders(raw string) string {
	var b strings.Builder
	if !strings.Contains(strings.ToLower(raw), "content-type:") {
		b.WriteString("Content-Type: application/json\r\n")
	}
	if !strings.Contains(strings.ToLower(raw), "accept:") {
		b.WriteString("Accept: application/json\r\n")
	}
	return b.String()
}

// rawStatus sends raw bytes and returns the status of the answer.
func rawStatus(t *testing.T, tf *testFront, raw string) int {
	t.Helper()
	c, err := net.Dial("tcp", tf.host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// Slow headers and slow bodies do not hold a connection: the header timeout closes it, the body
// deadline answers 408.
func TestSlowHeadersAndBodies(t *testing.T) {
	t.Parallel()
	tf := newFront(t, frontSetup{opts: func(o *streamhttp.Options) {
		o.ReadHeaderTimeout = 300 * time.Millisecond
		o.BodyTimeout = 300 * time.Millisecond
	}})
	c, err := net.Dial("tcp", tf.host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	_, _ = io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: "+tf.host+"\r\n")
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	b, _ := io.ReadAll(c)
	if took := time.Since(start); took > 5*time.Second || strings.Contains(string(b), " 200 ") {
		t.Fatalf("slow headers: after %s the connection gave %q", took, b)
	}

	c2, err := net.Dial("tcp", tf.host)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	start = time.Now()
	_, _ = io.WriteString(c2, "POST /mcp HTTP/1.1\r\nHost: "+tf.host+"\r\nContent-Type: application/json\r\nAccept: application/json\r\n"+
		fmt.Sprintf("Content-Length: %d\r\n\r\n", len(initBody))+initBody[:10])
	_ = c2.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c2), nil)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); resp.StatusCode != http.StatusRequestTimeout || took > 5*time.Second {
		t.Fatalf("slow body: %s after %s", resp.Status, took)
	}
}

// A client that never reads its event stream holds neither memory nor the session: the write that
// cannot go out ends at the write deadline (the answer stays for a replay and its receipt is in the
// book), and a client that leaves more than its buffer unread is cut off; its calls still get receipts.
func TestClientThatNeverReads(t *testing.T) {
	t.Parallel()
	tf := newFront(t, frontSetup{opts: func(o *streamhttp.Options) {
		o.WriteTimeout = 2 * time.Second
		o.BufferBytes = 20 << 20
	}})
	sid := tf.initialize("2025-11-25")
	// A raw connection that sends the call and never reads: an answer of 12 MiB cannot fit the
	// socket's buffers.
	send := func(id int) net.Conn {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"big","arguments":{"bytes":%d}}}`, id, 12<<20)
		c, err := net.Dial("tcp", tf.host)
		if err != nil {
			t.Fatal(err)
		}
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetReadBuffer(4096)
		}
		_, err = io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: "+tf.host+"\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\n"+
			"Mcp-Session-Id: "+sid+"\r\nMcp-Protocol-Version: 2025-11-25\r\n"+fmt.Sprintf("Content-Length: %d\r\n\r\n", len(body))+body)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c1 := send(1)
	defer c1.Close()
	waitLog(t, tf, "an event stream's connection ended while writing")
	// The answer is kept: a replay from the priming event gets it whole.
	h := session(sid, "2025-11-25")
	h["Last-Event-ID"] = []string{"2-0"} // stream 1 was initialize's
	var replayed []sseEvent
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp := tf.do(request{method: http.MethodGet, headers: h})
		if resp.StatusCode == http.StatusConflict && time.Now().Before(deadline) {
			_ = resp.Body.Close()
			time.Sleep(50 * time.Millisecond)
			continue
		}
		replayed = readEvents(t, resp.Body)
		break
	}
	if len(replayed) != 1 || len(replayed[0].data) < 12<<20 {
		t.Fatalf("the replay gave %d events: %.300v", len(replayed), replayed)
	}
	// Two more such calls leave 24 MiB unread: over the buffer, the session is cut off.
	c2 := send(2)
	defer c2.Close()
	c3 := send(3)
	defer c3.Close()
	waitLog(t, tf, "the session's client reads too little")
	resp := tf.do(request{body: `{"jsonrpc":"2.0","id":4,"method":"ping"}`, headers: session(sid, "2025-11-25")})
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("a request after the cut: %s", resp.Status)
	}
	tf.close()
	if n := stubs(t, tf); n != 3 {
		t.Fatalf("%d stubs, want 3", n)
	}
}

// A thousand sessions: beyond MaxSessions every initialize is refused with 503 and a JSON-RPC error
// that says why; the sessions running go on, and one more is taken when one ends.
func TestAThousandSessions(t *testing.T) {
	t.Parallel()
	tf := newFront(t, frontSetup{opts: func(o *streamhttp.Options) { o.MaxSessions = 3 }})
	var sids []string
	for range 3 {
		sids = append(sids, tf.initialize("2025-11-25"))
	}
	var refused, other atomic.Int64
	var wg sync.WaitGroup
	work := make(chan struct{})
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range work {
				resp, err := tf.try(context.Background(), request{body: initBody})
				if err != nil {
					other.Add(1)
					continue
				}
				body := readAll(t, resp.Body)
				if resp.StatusCode == http.StatusServiceUnavailable && strings.Contains(body, `"code":1001`) && strings.Contains(body, "already runs 3 sessions") {
					refused.Add(1)
				} else {
					other.Add(1)
				}
			}
		}()
	}
	for range 1000 {
		work <- struct{}{}
	}
	close(work)
	wg.Wait()
	if refused.Load() != 1000 || other.Load() != 0 || tf.f.Sessions() != 3 {
		t.Fatalf("%d refused, %d otherwise, %d sessions", refused.Load(), other.Load(), tf.f.Sessions())
	}
	resp := tf.do(request{method: http.MethodDelete, headers: session(sids[0], "2025-11-25")})
	_ = resp.Body.Close()
	deadline := time.Now().Add(20 * time.Second)
	for tf.f.Sessions() == 3 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	tf.initialize("2025-11-25")
}

// ParseListen takes http://HOST:PORT/PATH only.
func TestParseListen(t *testing.T) {
	t.Parallel()
	for _, good := range []string{"http://127.0.0.1:8080/mcp", "http://localhost:0/x/y", "http://[::1]:9/mcp", "http://10.0.0.1:80"} {
		u, err := streamhttp.ParseListen(good)
		if err != nil {
			t.Errorf("%s: %v", good, err)
			continue
		}
		if u.Path == "" {
			t.Errorf("%s: no path", good)
		}
	}
	for _, bad := range []string{"https://127.0.0.1:8080/mcp", "http://127.0.0.1/mcp", "http://example.com:80/mcp", "http://u:p@127.0.0.1:1/mcp",
		"http://127.0.0.1:1/mcp?x", "http://127.0.0.1:1/m%20cp", "http://127.0.0.1:99999/mcp", "http://127.0.0.1:08/mcp", "unix:/x"} {
		if _, err := streamhttp.ParseListen(bad); err == nil {
			t.Errorf("%s: taken", bad)
		}
	}
}

// Mcp-Param-* headers (a tool's x-mcp-header annotations) must say what the body says: learned from the
// tools/list answer the front hands on; before it, a call with such headers is refused; after it, a header
// that disagrees, is missing, is extra or names nothing is refused, before anything is judged.
func TestParamHeadersAgreeWithTheBody(t *testing.T) {
	t.Parallel()
	tf := newFront(t, frontSetup{})
	call := func(args string, headers ...string) (int, string) {
		h := modern("tools/call", "region")
		for i := 0; i+1 < len(headers); i += 2 {
			h[headers[i]] = append(h[headers[i]], headers[i+1])
		}
		resp := tf.do(request{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"region","arguments":` + args + `,` + modernMeta + `}}`, headers: h})
		return resp.StatusCode, readAll(t, resp.Body)
	}
	if st, body := call(`{"region":"eu"}`, "Mcp-Param-Region", "eu"); st != http.StatusBadRequest || !strings.Contains(body, "call tools/list") {
		t.Fatalf("before tools/list: %d %s", st, body)
	}
	resp := tf.do(request{body: `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + modernMeta + `}}`, headers: modern("tools/list", "")})
	if body := answerOf(t, resp); !strings.Contains(body, `"x-mcp-header"`) {
		t.Fatalf("tools/list: %s", body)
	}
	before := copyLines(t, tf)
	for _, c := range []struct {
		name    string
		args    string
		headers []string
	}{
		{"another region in the header", `{"region":"us-west1"}`, []string{"Mcp-Param-Region", "eu-west1"}},
		{"no header for the region", `{"region":"us-west1"}`, nil},
		{"a header for an argument the body lacks", `{"query":"x"}`, []string{"Mcp-Param-Region", "us-west1"}},
		{"a header for a null argument", `{"region":null}`, []string{"Mcp-Param-Region", "us-west1"}},
		{"a header naming nothing", `{"region":"us"}`, []string{"Mcp-Param-Region", "us", "Mcp-Param-Other", "x"}},
		{"a nested integer otherwise", `{"region":"us","opts":{"level":3}}`, []string{"Mcp-Param-Region", "us", "Mcp-Param-Level", "4"}},
		{"a nested integer in hex", `{"region":"us","opts":{"level":42}}`, []string{"Mcp-Param-Region", "us", "Mcp-Param-Level", "0x2A"}},
		{"a nested integer without its header", `{"region":"us","opts":{"level":3}}`, []string{"Mcp-Param-Region", "us"}},
		{"two Region headers", `{"region":"us"}`, []string{"Mcp-Param-Region", "us", "Mcp-Param-Region", "eu"}},
	} {
		if st, body := call(c.args, c.headers...); st != http.StatusBadRequest || (c.name != "two Region headers" && !strings.Contains(body, `"code":-32020`)) {
			t.Errorf("%s: %d %s", c.name, st, body)
		}
	}
	if n := copyLines(t, tf); n != before {
		t.Fatalf("the copy grew by %d lines: something refused was judged", n-before)
	}
	for _, c := range []struct {
		name    string
		args    string
		headers []string
	}{
		{"the same region", `{"region":"us-west1","query":"q"}`, []string{"Mcp-Param-Region", "us-west1"}},
		{"the region in base64", `{"region":"Zürich"}`, []string{"Mcp-Param-Region", "=?base64?WsO8cmljaA==?="}},
		{"an integer written otherwise", `{"region":"us","opts":{"level":42}}`, []string{"Mcp-Param-Region", "us", "Mcp-Param-Level", "42.0"}},
		{"no annotated argument, no header", `{"query":"q"}`, nil},
	} {
		if st, body := call(c.args, c.headers...); st != http.StatusOK || !strings.Contains(body, "region ") {
			t.Errorf("%s: %d %s", c.name, st, body)
		}
	}
}

// A 2026-07-28 client that never reads its response holds nothing: the write ends at the write
// deadline, the call has its receipt, and the pooled session goes on serving.
func TestModernClientThatNeverReads(t *testing.T) {
	t.Parallel()
	tf := newFront(t, frontSetup{opts: func(o *streamhttp.Options) { o.WriteTimeout = time.Second }})
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"big","arguments":{"bytes":` + fmt.Sprint(12<<20) + `},` + modernMeta + `}}`
	c, err := net.Dial("tcp", tf.host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(4096)
	}
	_, err = io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: "+tf.host+"\r\nContent-Type: application/json\r\nAccept: application/json\r\n"+
		"Mcp-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: big\r\n"+fmt.Sprintf("Content-Length: %d\r\n\r\n", len(body))+body)
	if err != nil {
		t.Fatal(err)
	}
	waitLog(t, tf, "a 2026-07-28 response's connection ended while writing")
	resp := tf.do(request{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"next"},` + modernMeta + `}}`,
		headers: modern("tools/call", "echo")})
	if a := answerOf(t, resp); !strings.Contains(a, `"text":"next"`) {
		t.Fatalf("the next request: %s", a)
	}
	tf.close()
	if n := stubs(t, tf); n != 2 {
		t.Fatalf("%d stubs, want 2", n)
	}
}
