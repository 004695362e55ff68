package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"testing"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// startCall starts a call's telemetry for line, as the session does when it takes the line.
func startCall(t testing.TB, tel *Telemetry, line []byte) *Call {
	t.Helper()
	m, err := wire.Inspect(line)
	if err != nil {
		t.Fatal(err)
	}
	call := wire.ReadCall(line, m)
	return tel.StartCall(context.Background(), m, &call, "session")
}

// waitingApproval reads the calls-waiting-for-approval gauge.
func waitingApproval(t *testing.T, r *sdkmetric.ManualReader) int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == MetricWaitingApproval {
				var n int64
				for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
					n += p.Value
				}
				return n
			}
		}
	}
	return 0
}

// A held call counts as waiting for approval until its hold ends, and its approval.hold span is
// a child of the call's span, with the hold's error recorded.
func TestHoldTelemetry(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	reader := sdkmetric.NewManualReader()
	tel := New(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)),
		sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	c := startCall(t, tel, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`))
	end := c.HoldStarted()
	if n := waitingApproval(t, reader); n != 1 {
		t.Fatalf("waiting for approval while held: %d", n)
	}
	end(errors.New("the person said no"))
	if n := waitingApproval(t, reader); n != 0 {
		t.Fatalf("waiting for approval after the hold: %d", n)
	}
	spans := rec.Ended()
	if len(spans) != 1 || spans[0].Name() != spanApprovalHold || spans[0].Parent().SpanID() != c.span.SpanContext().SpanID() ||
		len(spans[0].Events()) != 1 {
		t.Fatalf("approval.hold span: %+v", spans)
	}
}

var traceIDForm = regexp.MustCompile(`^[0-9a-f]{32}$`)

// traceID is the trace id the stub names for a call whose _meta holds
// traceparent: the one of the span context extracted from it.
func traceID(t testing.TB, traceparent string) string {
	params, err := json.Marshal(map[string]any{"name": "x", "_meta": map[string]any{"traceparent": traceparent}})
	if err != nil {
		t.Fatal(err)
	}
	line := append(append([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`), params...), '}')
	return startCall(t, New(tracenoop.NewTracerProvider(), metricnoop.NewMeterProvider()), line).TraceID()
}

func TestTraceID(t *testing.T) {
	cases := map[string]string{
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01": "4bf92f3577b34da6a3ce929d0e0e4736",
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01": "",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01": "",
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01": "",
		// A later version is read as W3C Trace Context says; ff is not one.
		"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01":  "4bf92f3577b34da6a3ce929d0e0e4736",
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01":  "",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 ": "",
		"": "",
	}
	for in, want := range cases {
		if got := traceID(t, in); got != want {
			t.Errorf("traceID(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzTraceID(f *testing.F) {
	f.Add("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	f.Add("00--")
	f.Fuzz(func(t *testing.T, s string) {
		id := traceID(t, s)
		if id == "" {
			return
		}
		if !traceIDForm.MatchString(id) || len(s) < 55 || s[3:35] != id {
			t.Fatalf("traceID(%q) = %q", s, id)
		}
	})
}

// BenchmarkCallTelemetry is the telemetry work of one allowed call alone (its span from the client's
// traceparent, five children, the context put in the line to the server, the metrics), with the
// SDK (every span sampled, a batch processor to nowhere, a metrics reader) and with the API's
// no-ops, side by side: what the per-call figure of BenchmarkTelemetry hides in its fsyncs.
func BenchmarkCallTelemetry(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":"provared-1-x","method":"tools/call","params":{"name":"echo","arguments":{"text":"bench"},"_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}}`)
	m, err := wire.Inspect(line)
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []string{"off", "on"} {
		b.Run("telemetry="+mode, func(b *testing.B) {
			var tel *Telemetry
			if mode == "on" {
				tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
				defer func() { _ = tp.Shutdown(context.Background()) }()
				tel = New(tp, sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())))
			} else {
				tel = New(tracenoop.NewTracerProvider(), metricnoop.NewMeterProvider())
			}
			b.ReportAllocs()
			for b.Loop() {
				call := wire.ReadCall(line, m)
				c := tel.StartCall(context.Background(), m, &call, "session")
				c.CallID("provared-1-x")
				c.Named("echo", "", true)
				c.Child(SpanJudge)(nil)
				_ = c.Durable(FileCopy, func() error { return nil })
				_, _, _ = wire.EditRequest(line, m, []byte(`"provared-1-x"`), c.ToServer("echo", "provared-1-x"))
				c.ServerEnded("", "")
				c.Child(SpanSign)(nil)
				_ = c.Durable(FileBook, func() error { return nil })
				c.Decide(DecisionAllowed)
				c.End()
			}
		})
	}
}
