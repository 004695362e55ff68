//go:build integration

package sidecar_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/internal/syncbuf"
	"github.com/seed-6e06167c/mcp-executor/sidecar/policy"
	"github.com/seed-6e06167c/mcp-executor/sidecar/telemetry"
)

// These tests run the real binary against a real Jaeger (scripts/test.sh starts it with
// scripts/testenv/jaeger.sh, which prints its OTLP endpoint as MCP_EXECUTOR_TEST_OTLP_ENDPOINT, so
// that no other test's executor exports; OTEL_EXPORTER_OTLP_ENDPOINT does too).

// jaegerEnv returns the OTLP endpoint and the query URL of the running Jaeger.
func jaegerEnv(t *testing.T) (otlp, query string) {
	t.Helper()
	otlp, query = os.Getenv("MCP_EXECUTOR_TEST_OTLP_ENDPOINT"), os.Getenv("JAEGER_QUERY_URL")
	if otlp == "" {
		otlp = os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	if otlp == "" || query == "" {
		t.Fatal("MCP_EXECUTOR_TEST_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_ENDPOINT) and JAEGER_QUERY_URL must name a running Jaeger: " +
			`start the test servers first: eval "$(./scripts/testenv/servers.sh start)" in the repository's folder (it builds them once)`)
	}
	return otlp, query
}

// telemetryTools are the tools these tests call.
func telemetryOptions() devsetup.Options {
	o := baseOptions()
	o.Tools["tracecontext"] = devsetup.Tool{Action: "provared.data.read"}
	return o
}

// withoutOTEL is the process environment with every OTEL_* variable taken out.
func withoutOTEL() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTEL_") {
			out = append(out, kv)
		}
	}
	return out
}

// runStdio runs `mcp-executor stdio` under environ, connects a go-sdk client, runs calls, closes
// the client's side and waits for the process to end (its spans are flushed on the way out).
func runStdio(t *testing.T, env *devsetup.Env, environ []string, calls func(ctx context.Context, cs *mcp.ClientSession)) string {
	t.Helper()
	if executorBin == "" {
		t.Fatal("the executor binary was not built")
	}
	stderr := &syncbuf.Buffer{}
	cmd := exec.Command(executorBin, "stdio", "--config", env.SettingsPath)
	cmd.Env = environ
	cmd.Stderr = stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "telemetry-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: io.NopCloser(bufio.NewReader(out)), Writer: in}, nil)
	if err != nil {
		t.Fatalf("connecting: %v\n%s", err, stderr.String())
	}
	calls(ctx, cs)
	cs.Close()
	in.Close()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err := <-waited:
		if err != nil {
			t.Fatalf("the executor ended with %v\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("the executor did not end\n%s", stderr.String())
	}
	return stderr.String()
}

// jaegerSpan is a span as Jaeger's HTTP API gives it.
type jaegerSpan struct {
	TraceID       string `json:"traceID"`
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	References    []struct {
		RefType string `json:"refType"`
		TraceID string `json:"traceID"`
		SpanID  string `json:"spanID"`
	} `json:"references"`
	Tags []struct {
		Key   string `json:"key"`
		Value any    `json:"value"`
	} `json:"tags"`
}

func (s jaegerSpan) parent() string {
	for _, r := range s.References {
		if r.RefType == "CHILD_OF" {
			return r.SpanID
		}
	}
	return ""
}

func (s jaegerSpan) tag(key string) string {
	for _, tg := range s.Tags {
		if tg.Key == key {
			return fmt.Sprint(tg.Value)
		}
	}
	return ""
}

// traceSpans asks Jaeger for a trace's spans until at least want are there or the deadline passes.
func traceSpans(t *testing.T, query, traceID string, want int) []jaegerSpan {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var last []jaegerSpan
	for {
		last = nil
		resp, err := http.Get(query + "/api/traces/" + traceID)
		if err == nil {
			var body struct {
				Data []struct {
					Spans []jaegerSpan `json:"spans"`
				} `json:"data"`
			}
			if resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&body) == nil {
				for _, d := range body.Data {
					last = append(last, d.Spans...)
				}
			}
			resp.Body.Close()
		}
		if len(last) >= want || time.Now().After(deadline) {
			return last
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Calls sent with a client traceparent appear in Jaeger under that trace id: the executor's
// tools/call span is the child of the client's span, with judge, copy.fsync, the server's span,
// sign and book.fsync under it; the server reads the server span's context in its _meta; a
// refused call's span has its decision and its denial's fingerprint; the stub names the trace id.
func TestTracesReachJaeger(t *testing.T) {
	otlp, query := jaegerEnv(t)
	o, _ := serverOpts(t, "sdk", telemetryOptions())
	env, err := devsetup.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	const allowedParent = "00f067aa0ba902b7"
	// Fresh ids per run: Jaeger's memory holds the runs before.
	allowedTID := randomHex(t, 16)
	refusedTID := randomHex(t, 16)
	var seen string
	environ := append(withoutOTEL(), "OTEL_EXPORTER_OTLP_ENDPOINT="+otlp, "OTEL_SERVICE_NAME=mcp-executor-test",
		"OTEL_BSP_SCHEDULE_DELAY=100")
	stderr := runStdio(t, env, environ, func(ctx context.Context, cs *mcp.ClientSession) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tracecontext", Arguments: map[string]any{},
			Meta: mcp.Meta{"traceparent": "00-" + allowedTID + "-" + allowedParent + "-01", "tracestate": "vendor=kept"}})
		if err != nil || res.IsError {
			t.Fatalf("tracecontext: %v %+v", err, res)
		}
		seen = res.Content[0].(*mcp.TextContent).Text
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "unlisted_tool", Arguments: map[string]any{},
			Meta: mcp.Meta{"traceparent": "00-" + refusedTID + "-" + allowedParent + "-01"}})
		if err != nil || !res.IsError {
			t.Fatalf("unlisted_tool: %v %+v", err, res)
		}
	})

	spans := traceSpans(t, query, allowedTID, 6)
	byName := map[string]jaegerSpan{}
	for _, s := range spans {
		byName[s.OperationName+"/"+s.tag("span.kind")] = s
	}
	root, ok := byName["tools/call tracecontext/server"]
	if !ok {
		t.Fatalf("no server span tools/call tracecontext in trace %s: %+v\nexecutor stderr:\n%s", allowedTID, spans, stderr)
	}
	if root.parent() != allowedParent {
		t.Errorf("the call's span's parent = %q, want the client's span %s", root.parent(), allowedParent)
	}
	for key, want := range map[string]string{
		telemetry.AttrMCPMethod: "tools/call", telemetry.AttrGenAITool: "tracecontext", telemetry.AttrGenAIOperation: "execute_tool",
		telemetry.AttrDecision: telemetry.DecisionAllowed, telemetry.AttrServer: "default",
	} {
		if got := root.tag(key); got != want {
			t.Errorf("span attribute %s = %q, want %q", key, got, want)
		}
	}
	for _, key := range []string{telemetry.AttrCallID, telemetry.AttrJSONRPCID, telemetry.AttrMCPSession, telemetry.AttrStub} {
		if root.tag(key) == "" {
			t.Errorf("span attribute %s is missing: %+v", key, root.Tags)
		}
	}
	for _, name := range []string{"judge/internal", "copy.fsync/internal", "tools/call tracecontext/client", "sign/internal", "book.fsync/internal"} {
		child, ok := byName[name]
		if !ok {
			t.Errorf("no child span %s; spans: %v", name, names(spans))
			continue
		}
		if child.parent() != root.SpanID {
			t.Errorf("span %s's parent = %q, want the call's span %s", name, child.parent(), root.SpanID)
		}
	}
	// The server read the context of the executor's span to it, in the client's trace.
	client := byName["tools/call tracecontext/client"]
	if want := "00-" + allowedTID + "-" + client.SpanID + "-01"; seen != want {
		t.Errorf("the server read traceparent %q, want %q", seen, want)
	}
	// The stub names the client's trace id, taken from the span context.
	var stubs []bookEntry
	for _, e := range readBook(t, env.BookPath) {
		if e.Kind == "stub" {
			stubs = append(stubs, e)
		}
	}
	if len(stubs) != 1 || detailsOf(stubs[0].Content)["provared.trace-id"] != fp(allowedTID) {
		t.Errorf("the stub's provared.trace-id is not the fingerprint of %s: %+v", allowedTID, stubs)
	}
	if got := root.tag(telemetry.AttrStub); len(stubs) == 1 && got != stubs[0].Fingerprint {
		t.Errorf("span's stub %q, the book's %q", got, stubs[0].Fingerprint)
	}

	refused := traceSpans(t, query, refusedTID, 1)
	var denial *jaegerSpan
	for i := range refused {
		if refused[i].tag("span.kind") == "server" {
			denial = &refused[i]
		}
	}
	if denial == nil {
		t.Fatalf("no span of the refused call in trace %s: %+v", refusedTID, refused)
	}
	if denial.parent() != allowedParent || denial.tag(telemetry.AttrDecision) != telemetry.DecisionRefused ||
		denial.tag(telemetry.AttrDenial) == "" || denial.tag(telemetry.AttrErrorType) != policy.CodeUnlisted {
		t.Errorf("the refused call's span: %+v", denial)
	}
	for _, s := range refused {
		if strings.HasSuffix(s.OperationName, "unlisted_tool") && s.tag("span.kind") == "client" {
			t.Errorf("a refused call has a span to the server: %+v", s)
		}
	}
	// Every log line about a call names its call id, trace id and span id.
	for _, line := range strings.Split(stderr, "\n") {
		if strings.Contains(line, `"call":"provared-`) && (!strings.Contains(line, `"trace_id":`) || !strings.Contains(line, `"span_id":`)) {
			t.Errorf("a log line about a call without its trace and span ids: %s", line)
		}
	}
	if !strings.Contains(stderr, `"trace_id":"`+allowedTID+`"`) {
		t.Errorf("no log line names trace %s:\n%s", allowedTID, stderr)
	}
}

// With no OTEL_* variable set, nothing leaves the process: Jaeger, on the exporters' default
// endpoint (127.0.0.1:4318), never hears of the call's trace.
func TestNoOTELNothingExported(t *testing.T) {
	_, query := jaegerEnv(t)
	o, _ := serverOpts(t, "sdk", telemetryOptions())
	env, err := devsetup.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	tid := randomHex(t, 16)
	var seen string
	runStdio(t, env, withoutOTEL(), func(ctx context.Context, cs *mcp.ClientSession) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tracecontext", Arguments: map[string]any{},
			Meta: mcp.Meta{"traceparent": "00-" + tid + "-00f067aa0ba902b7-01"}})
		if err != nil || res.IsError {
			t.Fatalf("tracecontext: %v %+v", err, res)
		}
		seen = res.Content[0].(*mcp.TextContent).Text
	})
	// Without an SDK the client's context goes to the server as the client sent it.
	if want := "00-" + tid + "-00f067aa0ba902b7-01"; seen != want {
		t.Errorf("the server read %q, want the client's own %q", seen, want)
	}
	// A canary: the same call from a run that exports. Once its trace is in Jaeger, a span the
	// first run had sent would be too (each flushed before it exited).
	canary := randomHex(t, 16)
	otlp, _ := jaegerEnv(t)
	runStdio(t, env, append(withoutOTEL(), "OTEL_EXPORTER_OTLP_ENDPOINT="+otlp), func(ctx context.Context, cs *mcp.ClientSession) {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tracecontext", Arguments: map[string]any{},
			Meta: mcp.Meta{"traceparent": "00-" + canary + "-00f067aa0ba902b7-01"}}); err != nil {
			t.Fatal(err)
		}
	})
	if got := traceSpans(t, query, canary, 6); len(got) < 6 {
		t.Fatalf("the canary's trace %s did not reach Jaeger: %v", canary, names(got))
	}
	if got := traceSpans(t, query, tid, 0); len(got) != 0 {
		t.Errorf("Jaeger holds trace %s of a run with no OTEL_* variable: %v", tid, names(got))
	}
}

// randomHex is n random bytes in hex.
func randomHex(t *testing.T, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func names(spans []jaegerSpan) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.OperationName+"/"+s.tag("span.kind")+" parent "+s.parent())
	}
	return out
}

// runServe starts `mcp-executor serve` with a health address of its own and no OTEL_* variable,
// and returns a connected client session and the base URL of its health endpoint. The process is
// stopped (SIGTERM) at the test's end.
func runServe(t *testing.T, env *devsetup.Env) (*mcp.ClientSession, string) {
	t.Helper()
	if executorBin == "" {
		t.Fatal("the executor binary was not built")
	}
	sock := filepath.Join(t.TempDir(), "executor.sock")
	stderr := &syncbuf.Buffer{}
	cmd := exec.Command(executorBin, "serve", "--config", env.SettingsPath, "--listen", "unix:"+sock, "--health", "127.0.0.1:0")
	cmd.Env = withoutOTEL()
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(waited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-waited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("serve did not stop\n%s", stderr.String())
		}
		if t.Failed() {
			t.Logf("serve stderr:\n%s", stderr.String())
		}
	})
	// The health address is in the log line "health endpoint"; the socket is up once "listening" is.
	var health string
	deadline := time.Now().Add(30 * time.Second)
	for health == "" || !strings.Contains(stderr.String(), `"msg":"listening"`) {
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start listening\n%s", stderr.String())
		}
		for _, line := range strings.Split(stderr.String(), "\n") {
			var l struct {
				Msg     string `json:"msg"`
				Address string `json:"address"`
			}
			if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "health endpoint" {
				health = "http://" + l.Address
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	conn, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "metrics-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: conn, Writer: conn}, nil)
	if err != nil {
		t.Fatalf("connecting: %v\n%s", err, stderr.String())
	}
	t.Cleanup(func() { cs.Close() })
	return cs, health
}

// scrape reads /metrics and parses it with expfmt.
func scrape(t *testing.T, health string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(health + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics is not Prometheus text: %v", err)
	}
	return fams
}

// sample finds the value of the family's metric whose labels include want: a counter's or gauge's
// value, a histogram's count.
func sample(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	fam, ok := fams[name]
	if !ok {
		return 0, false
	}
	total, found := 0.0, false
next:
	for _, m := range fam.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if labels[k] != v {
				continue next
			}
		}
		found = true
		switch {
		case m.Counter != nil:
			total += m.Counter.GetValue()
		case m.Gauge != nil:
			total += m.Gauge.GetValue()
		case m.Histogram != nil:
			total += float64(m.Histogram.GetSampleCount())
		}
	}
	return total, found
}

// /metrics at serve's health address, parsed with expfmt, moves as the calls say: calls by
// server, tool and decision; the server's and the executor's own time as histograms; fsyncs;
// the book's entries and bytes; the copy's lines; signatures; nothing left in flight.
func TestMetricsOnHealthAddress(t *testing.T) {
	o, _ := serverOpts(t, "sdk", telemetryOptions())
	env, err := devsetup.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	cs, health := runServe(t, env)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	before := scrape(t, health)
	if n, _ := sample(before, "mcp_executor_calls_total", nil); n != 0 {
		t.Fatalf("calls before any call: %v", n)
	}
	for range 3 {
		if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}); err != nil || res.IsError {
			t.Fatalf("echo: %v %+v", err, res)
		}
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "unlisted_tool", Arguments: map[string]any{}}); err != nil || !res.IsError {
		t.Fatalf("unlisted_tool: %v %+v", err, res)
	}
	fams := scrape(t, health)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"mcp_executor_calls_total", map[string]string{"server": "default", "tool": "echo", "decision": "allowed"}, 3},
		{"mcp_executor_calls_total", map[string]string{"tool": "(unlisted)", "decision": "refused"}, 1},
		{"mcp_executor_call_server_duration_seconds", map[string]string{"tool": "echo"}, 3},
		{"mcp_executor_call_executor_duration_seconds", map[string]string{"tool": "echo", "decision": "allowed"}, 3},
		{"mcp_executor_call_executor_duration_seconds", map[string]string{"decision": "refused"}, 1},
		{"mcp_executor_book_entries_total", map[string]string{"kind": "stub"}, 3},
		{"mcp_executor_book_entries_total", map[string]string{"kind": "denial"}, 1},
		{"mcp_executor_copy_lines_total", map[string]string{"kind": "sent"}, 3},
		{"mcp_executor_copy_lines_total", map[string]string{"kind": "receipt"}, 3},
		{"mcp_executor_copy_lines_total", map[string]string{"kind": "denial"}, 1},
		{"mcp_executor_fsync_duration_seconds", map[string]string{"file": "copy"}, 3},
		{"mcp_executor_fsync_duration_seconds", map[string]string{"file": "book"}, 4},
		// Each stub is signed by the agent's keys (Ed25519, ML-DSA-87), countersigned by the
		// executor's; the denial by the executor's.
		{"mcp_executor_signer_duration_seconds", map[string]string{"keys": "agent"}, 6},
		{"mcp_executor_signer_duration_seconds", map[string]string{"keys": "executor"}, 8},
		{"mcp_executor_calls_in_flight", nil, 0},
		{"mcp_executor_bytes_in_flight", nil, 0},
	} {
		got, ok := sample(fams, c.name, c.labels)
		if !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	if n, _ := sample(fams, "mcp_executor_book_bytes_total", nil); n < 1000 {
		t.Errorf("book bytes %v: 4 signed entries are more than 1000 bytes", n)
	}
	if _, ok := sample(fams, "mcp_executor_signer_errors_total", nil); ok {
		t.Errorf("signer errors counted with no error")
	}
	if t.Failed() {
		for name := range fams {
			t.Logf("family %s", name)
		}
	}
}
