package streamhttp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/internal/syncbuf"
	"github.com/seed-6e06167c/mcp-executor/sidecar"
	"github.com/seed-6e06167c/mcp-executor/sidecar/front/streamhttp"
	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// serverModeEnv makes this test binary run as a tool server: "gosdk" (go-sdk's server with the tools
// below) or "raw" (lines written by hand, to check that the client gets the server's own bytes).
const serverModeEnv = "MCP_EXECUTOR_STREAMHTTP_TEST_SERVER"

func TestMain(m *testing.M) {
	switch os.Getenv(serverModeEnv) {
	case "gosdk":
		runGoSDKServer()
		return
	case "raw":
		runRawServer()
		return
	}
	os.Exit(m.Run())
}

type textArgs struct {
	Text string `json:"text"`
}

type slowArgs struct {
	MS int `json:"ms"`
}

type bigArgs struct {
	Bytes int `json:"bytes"`
}

func runGoSDKServer() {
	s := mcp.NewServer(&mcp.Implementation{Name: "streamhttp-test-server", Version: "1"}, nil)
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, a textArgs) (*mcp.CallToolResult, any, error) {
		return text(a.Text), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "held"}, func(_ context.Context, _ *mcp.CallToolRequest, a textArgs) (*mcp.CallToolResult, any, error) {
		return text("held call ran: " + a.Text), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "forbidden"}, func(_ context.Context, _ *mcp.CallToolRequest, _ textArgs) (*mcp.CallToolResult, any, error) {
		return text("the forbidden tool ran"), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "slow"}, func(ctx context.Context, _ *mcp.CallToolRequest, a slowArgs) (*mcp.CallToolResult, any, error) {
		select {
		case <-time.After(time.Duration(a.MS) * time.Millisecond):
			return text("slept"), nil, nil
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	})
	mcp.AddTool(s, &mcp.Tool{Name: "region", InputSchema: json.RawMessage(`{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"opts":{"type":"object","properties":{"level":{"type":"integer","x-mcp-header":"Level"}}},
		"query":{"type":"string"}}}`)}, func(_ context.Context, _ *mcp.CallToolRequest, a map[string]any) (*mcp.CallToolResult, any, error) {
		return text(fmt.Sprintf("region %v", a["region"])), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "big"}, func(_ context.Context, _ *mcp.CallToolRequest, a bigArgs) (*mcp.CallToolResult, any, error) {
		return text(strings.Repeat("x", a.Bytes)), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *mcp.CallToolRequest, a textArgs) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: a.Text,
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}}})
		if err != nil {
			return nil, nil, err
		}
		return text("the client said " + res.Action), nil, nil
	})
	_ = s.Run(context.Background(), &mcp.StdioTransport{})
}

// runRawServer answers by hand, in bytes no encoder writes: spaces, escapes, the id last.
func runRawServer() {
	r := bufio.NewReader(os.Stdin)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		m, err := wire.Inspect(bytes.TrimSuffix(line, []byte("\n")))
		if err != nil || m.Kind != wire.KindRequest {
			continue
		}
		var out string
		switch m.Method {
		case "initialize":
			out = `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}}`
		case "tools/call":
			out = rawAnswer(m.ID)
		default:
			out = `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{}}`
		}
		_, _ = os.Stdout.WriteString(out + "\n")
	}
}

// rawAnswer is the raw server's answer to a tool call under id.
func rawAnswer(id []byte) string {
	return `{ "jsonrpc" : "2.0", "result" : { "content" : [ { "type" : "text", "text" : "caf\u00e9 \"quoted\" \/ caf` + "\u00e9" + `" } ], "isError" : false } , "id" :` + string(id) + ` }`
}

// newLogger is a JSON logger into b.
func newLogger(b io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// testTools are the rules of the test server's tools: most allowed, held held for approval,
// forbidden not listed.
var testTools = map[string]devsetup.Tool{
	"echo":   {Action: "provared.data.read"},
	"slow":   {Action: "provared.data.read"},
	"big":    {Action: "provared.data.read"},
	"ask":    {Action: "provared.data.read"},
	"region": {Action: "provared.data.read"},
	"held":   {Action: "provared.data.read", Approve: true},
}

// frontSetup changes a test front's options.
type frontSetup struct {
	mode     string         // the tool server: "gosdk" (default) or "raw"
	settings map[string]any // further settings members
	opts     func(*streamhttp.Options)
}

// testFront is a Front in front of a real executor, on a loopback port.
type testFront struct {
	t     *testing.T
	f     *streamhttp.Front
	url   string
	host  string
	env   *devsetup.Env
	log   *syncbuf.Buffer
	exe   *sidecar.Executor
	srv   *http.Server
	stopc chan struct{}
}

func newFront(t *testing.T, setup frontSetup) *testFront {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	mode := setup.mode
	if mode == "" {
		mode = "gosdk"
	}
	tools := testTools
	if mode == "raw" {
		tools = map[string]devsetup.Tool{"exact": {Action: "provared.data.read"}}
	}
	env, err := devsetup.Build(devsetup.Options{Dir: t.TempDir(), Command: self,
		Env: map[string]map[string]any{serverModeEnv: {"value": mode}}, Tools: tools, Settings: setup.settings})
	if err != nil {
		t.Fatal(err)
	}
	log := &syncbuf.Buffer{}
	logger := newLogger(log)
	exe, err := sidecar.Open(context.Background(), sidecar.OpenOptions{ConfigPath: env.SettingsPath, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	u, err := streamhttp.ParseListen("http://127.0.0.1:0/mcp")
	if err != nil {
		t.Fatal(err)
	}
	o := streamhttp.Options{Engine: exe, Listen: u, Logger: logger, ServerStderr: io.Discard}
	if setup.opts != nil {
		setup.opts(&o)
	}
	f, err := streamhttp.New(o)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	if err := f.SetPort(port); err != nil {
		t.Fatal(err)
	}
	tf := &testFront{t: t, f: f, url: "http://127.0.0.1:" + port + "/mcp", host: "127.0.0.1:" + port, env: env, log: log, exe: exe,
		srv: f.Server(), stopc: make(chan struct{})}
	go func() {
		defer close(tf.stopc)
		_ = tf.srv.Serve(l) // ends with ErrServerClosed at the cleanup
	}()
	t.Cleanup(func() {
		tf.close()
		if t.Failed() {
			t.Logf("log:\n%s", lastBytes(log.String(), 16000))
		}
	})
	return tf
}

// close drains the front, ends the HTTP server and closes the executor.
func (tf *testFront) close() {
	select {
	case <-tf.stopc:
		return
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tf.f.Drain(ctx)
	_ = tf.srv.Close()
	<-tf.stopc
	tf.f.Close()
	if err := tf.exe.Close(); err != nil {
		tf.t.Errorf("closing the executor: %v", err)
	}
}

func lastBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// request is one HTTP request to the front.
type request struct {
	method     string // default POST
	body       string
	headers    map[string][]string // added after the defaults; an empty list removes a default
	noDefaults bool
}

// do sends r and returns the response; the body is the caller's to read and close.
func (tf *testFront) do(r request) *http.Response {
	tf.t.Helper()
	resp, err := tf.try(context.Background(), r)
	if err != nil {
		tf.t.Fatal(err)
	}
	return resp
}

func (tf *testFront) try(ctx context.Context, r request) (*http.Response, error) {
	method := r.method
	if method == "" {
		method = http.MethodPost
	}
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, method, tf.url, body)
	if err != nil {
		return nil, err
	}
	if !r.noDefaults {
		if method == http.MethodPost {
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
		} else {
			req.Header.Set("Accept", "text/event-stream")
		}
	}
	for k, vs := range r.headers {
		if len(vs) == 0 {
			req.Header.Del(k)
			continue
		}
		req.Header[k] = vs
	}
	return http.DefaultClient.Do(req)
}

// initialize starts a session and returns its id.
func (tf *testFront) initialize(version string) string {
	tf.t.Helper()
	resp := tf.do(request{body: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + version +
		`","capabilities":{"elicitation":{"form":{}}},"clientInfo":{"name":"raw","version":"1"}}}`})
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		tf.t.Fatalf("initialize: %s %s", resp.Status, readAll(tf.t, resp.Body))
	}
	sid := resp.Header.Get("Mcp-Session-Id")
	answer := answerOf(tf.t, resp)
	if !strings.Contains(answer, `"result"`) {
		tf.t.Fatalf("initialize answered %s", answer)
	}
	r2 := tf.do(request{body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, headers: session(sid, version)})
	_ = r2.Body.Close()
	if r2.StatusCode != http.StatusAccepted {
		tf.t.Fatalf("notifications/initialized: %s", r2.Status)
	}
	return sid
}

// session is the headers of a request in a session.
func session(sid, version string) map[string][]string {
	return map[string][]string{"Mcp-Session-Id": {sid}, "Mcp-Protocol-Version": {version}}
}

// modern is the headers and _meta of a 2026-07-28 request.
func modern(method, name string) map[string][]string {
	h := map[string][]string{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {method}}
	if name != "" {
		h["Mcp-Name"] = []string{name}
	}
	return h
}

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

// answerOf reads a response to a request: the JSON body, or the data of the event stream's last
// event (the answer).
func answerOf(t *testing.T, resp *http.Response) string {
	t.Helper()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		evs := readEvents(t, resp.Body)
		if len(evs) == 0 {
			t.Fatal("an event stream without events")
		}
		return evs[len(evs)-1].data
	}
	return strings.TrimSuffix(readAll(t, resp.Body), "\n")
}

func readAll(t *testing.T, r io.Reader) string {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sseEvent is one server-sent event as a client reads it.
type sseEvent struct {
	id, event, data string
	retry           int
	hasData         bool
}

// readEvents reads an event stream to its end and returns the events with data (priming events
// included: their data is empty).
func readEvents(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var evs []sseEvent
	err := parseSSE(r, func(e sseEvent) bool { evs = append(evs, e); return true })
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// parseSSE reads an event stream as the WHATWG parser does (lines end at CR, LF or CRLF; a leading
// BOM is dropped; data fields join with LF; an event is dispatched at a blank line when it has a data
// field; comments are skipped) and calls each for every event until it returns false.
func parseSSE(r io.Reader, each func(sseEvent) bool) error {
	br := bufio.NewReaderSize(r, 1<<16)
	var cur sseEvent
	var data []string
	first := true
	lines := sseLines{br: br}
	for {
		line, err := lines.next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if first {
			line = strings.TrimPrefix(line, "\uFEFF")
			first = false
		}
		if line == "" {
			if cur.hasData {
				cur.data = strings.Join(data, "\n")
				if !each(cur) {
					return nil
				}
			}
			cur = sseEvent{id: cur.id}
			data = nil
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "data":
			data = append(data, value)
			cur.hasData = true
		case "id":
			if !strings.ContainsRune(value, 0) {
				cur.id = value
			}
		case "event":
			cur.event = value
		case "retry":
			_, _ = fmt.Sscanf(value, "%d", &cur.retry) // a retry that is not a number is ignored, as the standard says
		}
	}
}

// sseLines cuts a stream into lines ending at CR, LF or CRLF.
type sseLines struct {
	br      *bufio.Reader
	pending []string // lines cut from a chunk, not yet given
	skipLF  bool     // the last chunk ended with CR: a LF first is part of that line end
}

func (l *sseLines) next() (string, error) {
	for len(l.pending) == 0 {
		chunk, err := l.br.ReadString('\n')
		if err != nil && chunk == "" {
			return "", err
		}
		if l.skipLF && strings.HasPrefix(chunk, "\n") {
			chunk = chunk[1:]
			l.skipLF = false
			if chunk == "" {
				continue
			}
		}
		l.skipLF = false
		ended := strings.HasSuffix(chunk, "\n")
		chunk = strings.TrimSuffix(chunk, "\n")
		chunk = strings.TrimSuffix(chunk, "\r") // CRLF
		parts := strings.Split(chunk, "\r")
		if !ended && err != nil {
			l.pending = append(l.pending, parts...)
			break
		}
		if len(parts) > 1 && parts[len(parts)-1] == "" && !ended {
			l.skipLF = true
		}
		l.pending = append(l.pending, parts...)
	}
	line := l.pending[0]
	l.pending = l.pending[1:]
	return line, nil
}

// jsonMap decodes a JSON object.
func jsonMap(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("%v: %s", err, s)
	}
	return m
}
