package sidecar

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
	"github.com/seed-6e06167c/mcp-executor/sidecar/telemetry"
	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// TestOutgoing: a call goes to the server under the executor's id with the call id and the server
// span's trace context in params._meta, made in one pass, with a reading equal to Inspect's of the
// line; a _meta that refuses one group (a name equal under case folding, or not an object) gets the
// other, and the log names what was left out; the arguments' bytes are never touched.
func TestOutgoing(t *testing.T) {
	const tp = `"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"`
	for _, c := range []struct {
		name          string
		line          string
		callID, trace bool   // settings and a recording tracer
		wantCallID    bool   // the server's _meta holds the call id
		wantTrace     bool   // … and a traceparent of the executor's span
		warn          string // in the log
	}{
		{"both, no params", `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, true, true, true, true, ""},
		{"both, client context", `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo","arguments":{"x":[1,2]},"_meta":{` + tp + `}}}`, true, true, true, true, ""},
		{"call id only", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`, true, false, true, false, ""},
		{"trace only", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`, false, true, false, true, ""},
		{"neither", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`, false, false, false, false, ""},
		{"TRACEPARENT written otherwise", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"TRACEPARENT":"x"}}}`,
			true, true, true, false, "the trace context could not be put"},
		{"call id name written otherwise", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"RED.PROVA/CALL-ID":"x"}}}`,
			true, true, false, true, "the call id could not be put"},
		{"_meta not an object", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":5}}`,
			true, true, false, false, "the call id could not be put"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var log bytes.Buffer
			tel := telemetry.New(tracenoop.NewTracerProvider(), metricnoop.NewMeterProvider())
			if c.trace {
				tracer := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewInMemoryExporter()))
				defer func() { _ = tracer.Shutdown(context.Background()) }()
				tel = telemetry.New(tracer, metricnoop.NewMeterProvider())
			}
			s := &Session{e: &Executor{tel: tel, set: &settings.Settings{CallIDInMeta: c.callID}}, ctx: context.Background(),
				log: slog.New(slog.NewTextHandler(&log, nil))}
			m, err := wire.Inspect([]byte(c.line))
			if err != nil {
				t.Fatal(err)
			}
			tc := &toolCall{s: s, ourID: "provared-1-x", tool: "echo", call: wire.ReadCall([]byte(c.line), m)}
			tc.tel = tel.StartCall(context.Background(), m, &tc.call, "session")
			out, om := tc.outgoing([]byte(c.line), m)
			im, err := wire.Inspect(out)
			if err != nil {
				t.Fatalf("the server's line is refused: %v\n%s", err, out)
			}
			if om == nil || om.IDSpan != im.IDSpan || om.ParamsSpan != im.ParamsSpan || om.End != im.End || om.Method != im.Method {
				t.Fatalf("reading %+v, Inspect's %+v", om, im)
			}
			if string(im.ID) != `"provared-1-x"` {
				t.Errorf("id %s", im.ID)
			}
			v, found, _ := wire.Pointer(out, "/params/_meta/red.prova~1call-id")
			if found != c.wantCallID || found && string(v) != `"provared-1-x"` {
				t.Errorf("call id %s %v in %s", v, found, out)
			}
			v, found, _ = wire.Pointer(out, "/params/_meta/traceparent")
			if found != c.wantTrace || found && strings.Contains(string(v), "00f067aa0ba902b7") {
				t.Errorf("traceparent %s %v in %s", v, found, out)
			}
			a1, _, _ := wire.Pointer([]byte(c.line), "/params/arguments")
			a2, _, _ := wire.Pointer(out, "/params/arguments")
			if !bytes.Equal(a1, a2) {
				t.Errorf("arguments %s, sent %s", a1, a2)
			}
			if c.warn == "" && log.Len() > 0 || c.warn != "" && !strings.Contains(log.String(), c.warn) {
				t.Errorf("log %q, want %q", log.String(), c.warn)
			}
		})
	}
}
