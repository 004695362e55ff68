package sidecar

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

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
// a child of the call's span, with the hold's error recorded. (The hold itself is wired in by
// sidecar/hold.go; this is the hook it calls.)
func TestHoldTelemetry(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	reader := sdkmetric.NewManualReader()
	tel := newTelemetry(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)),
		sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	tc := &toolCall{s: &Session{e: &Executor{tel: tel}}}
	tc.ctx, tc.span = tel.tracer.Start(context.Background(), "tools/call")
	end := tc.holdStarted()
	if n := waitingApproval(t, reader); n != 1 {
		t.Fatalf("waiting for approval while held: %d", n)
	}
	end(errors.New("the person said no"))
	if n := waitingApproval(t, reader); n != 0 {
		t.Fatalf("waiting for approval after the hold: %d", n)
	}
	spans := rec.Ended()
	if len(spans) != 1 || spans[0].Name() != spanApprovalHold || spans[0].Parent().SpanID() != tc.span.SpanContext().SpanID() ||
		len(spans[0].Events()) != 1 {
		t.Fatalf("approval.hold span: %+v", spans)
	}
}

// Every reason for a 1001 carries its own label beside the message the
// client reads: no two messages share a reason by accident, and no label
// is guessed from the text.
func TestNotTakenLabels(t *testing.T) {
	for _, c := range []struct {
		nt             notTaken
		message, label string
	}{
		{notTakenMaxWaiting, "not taken: too many calls are waiting", "max-waiting"},
		{notTakenMaxBytes, "not taken: the calls in flight hold too many bytes (maxBytesWaiting)", "max-bytes-waiting"},
		{notTakenDraining, "not taken: the executor is stopping", "draining"},
		{notTakenNotRecorded, "not taken: the executor could not record the call", "not-recorded"},
		{notTakenRequestNotWritten, "not taken: the executor could not record the request for approval", "not-recorded"},
		{notTakenApprovalNotKept, "not taken: the executor could not keep the call's approval", "approval-not-kept"},
		{notTakenRefusalNotWritten, "not taken: the refusal could not be written", "refusal-not-written"},
		{notTakenListsWaiting, "too many tools/list requests are waiting for the tool server", "lists-waiting"},
		{notTakenStopped, "not taken: " + ErrStopped.Error(), "stopped"},
		{notTakenBookFull("the book is full"), "not taken: the book is full", "book-full"},
	} {
		if c.nt.message != c.message || c.nt.label != c.label {
			t.Errorf("%+v, want message %q and label %q", c.nt, c.message, c.label)
		}
	}
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
			var tel *telemetry
			if mode == "on" {
				tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
				defer func() { _ = tp.Shutdown(context.Background()) }()
				tel = newTelemetry(tp, sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())))
			} else {
				tel = newTelemetry(tracenoop.NewTracerProvider(), metricnoop.NewMeterProvider())
			}
			s := &Session{e: &Executor{tel: tel, set: &settings.Settings{}}, ctx: context.Background(), log: slog.New(slog.DiscardHandler)}
			b.ReportAllocs()
			for b.Loop() {
				tc := &toolCall{s: s, ourID: "provared-1-x", tool: "echo"}
				tc.ctx, tc.span, tc.tele = s.startCall(m)
				tc.named("echo", true)
				tc.child(spanJudge)(nil)
				_ = tc.durable(fileCopy, func() error { return nil })
				_, _ = tc.outgoing(line, m)
				tc.serverEnded(outcome{kind: outResult})
				tc.child(spanSign)(nil)
				_ = tc.durable(fileBook, func() error { return nil })
				tc.decide(DecisionAllowed)
				tc.endCall()
			}
		})
	}
}
