package sidecar_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/sidecar"
	"github.com/seed-6e06167c/mcp-executor/sidecar/telemetry"
)

// collect reads the reader's metrics as name → the sum of its data points' values (a histogram's
// count), for points whose attributes include want.
func collect(t *testing.T, r *sdkmetric.ManualReader, name string, want map[string]string) int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	match := func(set attribute.Set) bool {
		for k, v := range want {
			if got, ok := set.Value(attribute.Key(k)); !ok || got.AsString() != v {
				return false
			}
		}
		return true
	}
	var total int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					if match(p.Attributes) {
						total += p.Value
					}
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					if match(p.Attributes) {
						total += int64(p.Count)
					}
				}
			}
		}
	}
	return total
}

// inProcessWith runs a session in this process on an executor opened with o (its ConfigPath set
// from env); h.stop ends it.
func inProcessWith(t *testing.T, env *devsetup.Env, o sidecar.OpenOptions) *harness {
	t.Helper()
	_, h := openInProcess(t, env, o)
	return h
}

// In one process, with providers given to Open: a 1001 call, two allowed calls and a refused one each have their span, the child of the client's traceparent; the allowed
// call's span has its five children, and the server reads the context of the span to it; the
// metrics count each by decision, and 1001 by why.
func TestTelemetryInProcess(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	o := baseOptions()
	o.Tools["tracecontext"] = devsetup.Tool{Action: "provared.data.read"}
	o.Settings = map[string]any{"maxWaiting": 1}
	o, _ = serverOpts(t, "sdk", o)
	env, err := devsetup.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	h := inProcessWith(t, env, sidecar.OpenOptions{TracerProvider: tp, MeterProvider: mp})
	const (
		tid    = "4bf92f3577b34da6a3ce929d0e0e4736"
		parent = "00f067aa0ba902b7"
		tp1    = "00-" + tid + "-" + parent + "-01"
	)
	meta := `"_meta":{"traceparent":"` + tp1 + `"}`
	h.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if got := h.recv(); !strings.Contains(got, `"result"`) {
		t.Fatalf("initialize: %s", got)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	// The slow call holds the one place while the next line is read; the next is not taken.
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"MS":2000},` + meta + `}}`)
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{},` + meta + `}}`)
	if got := h.recv(); !strings.Contains(got, `"id":2`) || !strings.Contains(got, `"code":1001`) {
		t.Fatalf("want 1001 for id 2: %s", got)
	}
	if got := h.recv(); !strings.Contains(got, `"id":1`) || !strings.Contains(got, "slept") {
		t.Fatalf("want the slow call's answer: %s", got)
	}
	h.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"tracecontext","arguments":{},` + meta + `}}`)
	got := h.recv()
	var answer struct {
		Result struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(got), &answer); err != nil || len(answer.Result.Content) != 1 {
		t.Fatalf("tracecontext: %s", got)
	}
	seen := answer.Result.Content[0].Text
	h.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"unlisted_tool","arguments":{},` + meta + `}}`)
	if got := h.recv(); !strings.Contains(got, `"isError":true`) {
		t.Fatalf("unlisted: %s", got)
	}
	h.stop()

	calls := map[string]sdktrace.ReadOnlySpan{}
	children := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		if s.SpanKind() == trace.SpanKindServer {
			for _, a := range s.Attributes() {
				if string(a.Key) == telemetry.AttrDecision {
					calls[a.Value.AsString()] = s
				}
			}
			if s.Parent().SpanID().String() != parent || s.SpanContext().TraceID().String() != tid {
				t.Errorf("span %s is not the child of the client's %s: parent %s", s.Name(), tp1, s.Parent().SpanID())
			}
		} else {
			children[s.Parent().SpanID().String()] = append(children[s.Parent().SpanID().String()], s)
		}
	}
	for _, d := range []string{telemetry.DecisionNotTaken, telemetry.DecisionAllowed, telemetry.DecisionRefused} {
		if _, ok := calls[d]; !ok {
			t.Errorf("no call span with decision %s; have %v", d, calls)
		}
	}
	allowed, ok := calls[telemetry.DecisionAllowed]
	if !ok {
		t.FailNow()
	}
	// Two calls were allowed; the tracecontext one is the one named so.
	for _, s := range rec.Ended() {
		if s.Name() == "tools/call tracecontext" && s.SpanKind() == trace.SpanKindServer {
			allowed = s
		}
	}
	var kids []string
	var toServer sdktrace.ReadOnlySpan
	for _, c := range children[allowed.SpanContext().SpanID().String()] {
		kids = append(kids, c.Name())
		if c.SpanKind() == trace.SpanKindClient {
			toServer = c
		}
	}
	for _, want := range []string{"judge", "copy.fsync", "tools/call tracecontext", "sign", "book.fsync"} {
		if !strings.Contains(","+strings.Join(kids, ",")+",", ","+want+",") {
			t.Errorf("the allowed call's span has no child %s: %v", want, kids)
		}
	}
	if toServer != nil {
		if want := "00-" + tid + "-" + toServer.SpanContext().SpanID().String() + "-01"; seen != want {
			t.Errorf("the server read %q, want %q", seen, want)
		}
	}

	for _, c := range []struct {
		name   string
		labels map[string]string
		want   int64
	}{
		{telemetry.MetricCalls, map[string]string{"decision": telemetry.DecisionNotTaken}, 1},
		{telemetry.MetricCalls, map[string]string{"decision": telemetry.DecisionAllowed, "tool": "tracecontext"}, 1},
		{telemetry.MetricCalls, map[string]string{"decision": telemetry.DecisionAllowed, "tool": "slow"}, 1},
		{telemetry.MetricCalls, map[string]string{"decision": telemetry.DecisionRefused, "tool": "(unlisted)"}, 1},
		{telemetry.MetricNotTaken, map[string]string{"why": "max-waiting"}, 1},
		{telemetry.MetricServerDuration, nil, 2},
		{telemetry.MetricCallsInFlight, nil, 0},
	} {
		if got := collect(t, reader, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %d, want %d", c.name, c.labels, got, c.want)
		}
	}
}
