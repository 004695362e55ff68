package telemetry

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// instrumentation is the name of the executor's tracer and meter: the
// engine's package, as it has always been.
const instrumentation = "github.com/seed-6e06167c/mcp-executor/sidecar"

// Span attributes of the OpenTelemetry semantic conventions for MCP and
// GenAI tool execution, and the executor's own.
const (
	AttrMCPMethod      = "mcp.method.name"
	AttrMCPSession     = "mcp.session.id"
	AttrGenAITool      = "gen_ai.tool.name"
	AttrGenAIOperation = "gen_ai.operation.name"
	AttrJSONRPCID      = "jsonrpc.request.id"
	AttrErrorType      = "error.type"
	AttrDecision       = "mcp_executor.decision"
	AttrDenial         = "mcp_executor.denial"
	AttrServer         = "mcp_executor.server"
	AttrRefused        = "mcp_executor.refused"
	AttrCallID         = "mcp_executor.call_id" // the executor's call id
	AttrTool           = "mcp_executor.tool"
	AttrStub           = "mcp_executor.stub" // the fingerprint of the call's stub
	attrHeldMS         = "mcp_executor.approval.held_ms"
	attrApprovalReq    = "mcp_executor.approval.request"
	operationToolExec  = "execute_tool"
	methodToolsCall    = "tools/call"
	unlistedToolLabel  = "(unlisted)"
)

// The names of a call's child spans ([Call.Child]).
const (
	SpanJudge        = "judge"
	SpanSign         = "sign"
	spanCopyFsync    = "copy.fsync"
	spanBookFsync    = "book.fsync"
	spanApprovalHold = "approval.hold"
)

// The files a durable write goes to ([Call.Durable]), the key sets a
// signature is made with ([Telemetry.Signed]), and the server label of the
// single "server" form.
const (
	FileCopy      = "copy"
	FileBook      = "book"
	KeysAgent     = "agent"
	KeysExec      = "executor"
	DefaultServer = "default"
)

// The decisions a call's span and the calls metric name.
const (
	DecisionAllowed   = "allowed"      // sent to the server; its receipt is in the book (or was to be)
	DecisionRefused   = "refused"      // refused by the executor's rules or the check before acting
	DecisionNotTaken  = "not-taken"    // answered 1001
	DecisionInvalid   = "invalid"      // not a readable tools/call
	DecisionForwarded = "forwarded"    // unlisted, forwarded without a record (unlisted: forward)
	DecisionWithdrawn = "withdrawn"    // cancelled before it was sent
	DecisionNoRecord  = "not-recorded" // its copy line could not be written: not sent
	DecisionHeldEnded = "held-ended"   // held for approval, and ended there without being sent or refused
)

// Metric names (OTel form; Prometheus shows dots as underscores and adds
// _total to counters and the unit to histograms).
const (
	MetricCalls           = "mcp_executor.calls"
	MetricServerDuration  = "mcp_executor.call.server.duration"
	MetricOwnDuration     = "mcp_executor.call.executor.duration"
	MetricFsyncDuration   = "mcp_executor.fsync.duration"
	MetricBookEntries     = "mcp_executor.book.entries"
	MetricBookBytes       = "mcp_executor.book.bytes"
	MetricCopyLines       = "mcp_executor.copy.lines"
	MetricCallsInFlight   = "mcp_executor.calls.in_flight"
	MetricBytesInFlight   = "mcp_executor.bytes.in_flight"
	MetricWaitingApproval = "mcp_executor.calls.waiting_approval"
	MetricNotTaken        = "mcp_executor.not_taken"
	MetricSignErrors      = "mcp_executor.signer.errors"
	MetricSignDuration    = "mcp_executor.signer.duration"
	MetricLinesDropped    = "mcp_executor.server.lines_dropped"
)

// Telemetry holds the executor's tracer and instruments.
type Telemetry struct {
	tracer     trace.Tracer
	propagator propagation.TextMapPropagator

	calls           metric.Int64Counter
	serverDuration  metric.Float64Histogram
	ownDuration     metric.Float64Histogram
	fsyncDuration   metric.Float64Histogram
	bookEntries     metric.Int64Counter
	bookBytes       metric.Int64Counter
	copyLines       metric.Int64Counter
	callsInFlight   metric.Int64UpDownCounter
	bytesInFlight   metric.Int64UpDownCounter
	waitingApproval metric.Int64UpDownCounter
	notTaken        metric.Int64Counter
	signErrors      metric.Int64Counter
	signDuration    metric.Float64Histogram
	linesDropped    metric.Int64Counter
}

// durationBuckets are seconds, from 100 µs to 30 s.
var durationBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// New makes the tracer and instruments from the providers (the global ones
// when nil). An instrument that cannot be made is a no-op one: the OTel API
// never fails a call for its telemetry.
func New(tp trace.TracerProvider, mp metric.MeterProvider) *Telemetry {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	m := mp.Meter(instrumentation)
	t := &Telemetry{tracer: tp.Tracer(instrumentation), propagator: propagation.TraceContext{}}
	dur := func(name, desc string) metric.Float64Histogram {
		h, _ := m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
			metric.WithExplicitBucketBoundaries(durationBuckets...))
		return h
	}
	count := func(name, unit, desc string) metric.Int64Counter {
		c, _ := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		return c
	}
	gauge := func(name, unit, desc string) metric.Int64UpDownCounter {
		c, _ := m.Int64UpDownCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		return c
	}
	t.calls = count(MetricCalls, "{call}", "tools/call requests by server, tool and decision")
	t.serverDuration = dur(MetricServerDuration, "time a sent call spent with the tool server")
	t.ownDuration = dur(MetricOwnDuration, "time a call spent in the executor, its time with the server left out")
	t.fsyncDuration = dur(MetricFsyncDuration, "time until a line of the copy or the book was durable (fsync, shared by a group)")
	t.bookEntries = count(MetricBookEntries, "{entry}", "entries appended to the book, by kind")
	t.bookBytes = count(MetricBookBytes, "By", "bytes appended to the book")
	t.copyLines = count(MetricCopyLines, "{line}", "lines appended to the executor's copy, by kind")
	t.callsInFlight = gauge(MetricCallsInFlight, "{call}", "tool calls taken and not yet answered")
	t.bytesInFlight = gauge(MetricBytesInFlight, "By", "bytes of the tool calls in flight (maxBytesWaiting)")
	t.waitingApproval = gauge(MetricWaitingApproval, "{call}", "tool calls held for a person's approval")
	t.notTaken = count(MetricNotTaken, "{answer}", "1001 (not taken) answers")
	t.signErrors = count(MetricSignErrors, "{error}", "signatures that failed after their tries, by key set")
	t.signDuration = dur(MetricSignDuration, "time of one signature with its tries, by key set")
	t.linesDropped = count(MetricLinesDropped, "{line}", "lines from a tool server dropped, never handed to the client")
	return t
}

// SessionID is a session's id for its spans' mcp.session.id (stdio and
// serve carry no MCP session header): made when first asked for.
type SessionID struct {
	once sync.Once
	id   string
}

// String is the id: 16 random bytes, hex.
func (s *SessionID) String() string {
	s.once.Do(func() {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			panic("crypto/rand failed: " + err.Error()) // never happens on a supported OS
		}
		s.id = hex.EncodeToString(b[:])
	})
	return s.id
}

// CopyLine counts a line appended to the copy, by its kind.
func (t *Telemetry) CopyLine(kind string) {
	t.copyLines.Add(context.Background(), 1, labelOpt("kind", kind))
}

// BookEntry counts an entry appended to the book, by its kind, and its
// bytes (its line feed among them).
func (t *Telemetry) BookEntry(ctx context.Context, kind string, bytes int64) {
	t.bookEntries.Add(ctx, 1, labelOpt("kind", kind))
	t.bookBytes.Add(ctx, bytes)
}

// InFlight moves the calls and bytes in flight by calls calls of n bytes.
func (t *Telemetry) InFlight(calls, n int64) {
	t.callsInFlight.Add(context.Background(), calls)
	t.bytesInFlight.Add(context.Background(), n)
}

// Signed records one signature's time with the key set keys (KeysAgent,
// KeysExec) and, when it failed, its error. A nil t records nothing.
func (t *Telemetry) Signed(ctx context.Context, keys string, start time.Time, err error) {
	if t == nil {
		return
	}
	a := labelOpt("keys", keys)
	t.signDuration.Record(ctx, time.Since(start).Seconds(), a)
	if err != nil {
		t.signErrors.Add(ctx, 1, a)
	}
}

// NotTakenAnswered counts a 1001 answer under its reason's label.
func (t *Telemetry) NotTakenAnswered(label string) {
	t.notTaken.Add(context.Background(), 1, labelOpt("why", label))
}

// LineDropped counts a line from the tool server that was dropped.
func (t *Telemetry) LineDropped() {
	t.linesDropped.Add(context.Background(), 1, metric.WithAttributes(attribute.String("server", DefaultServer)))
}

// labelOpts holds, for each metric label and value met so far, the
// measurement option carrying it: an attribute set is hashed once, not at
// every measurement. Only labels whose values come from a fixed list of
// the executor's own (kinds, files, key sets, reasons) go here.
var labelOpts sync.Map // "key\x00value" -> metric.MeasurementOption

func labelOpt(key, value string) metric.MeasurementOption {
	k := key + "\x00" + value
	if o, ok := labelOpts.Load(k); ok {
		if opt, ok := o.(metric.MeasurementOption); ok {
			return opt
		}
	}
	opt := metric.WithAttributeSet(attribute.NewSet(attribute.String(key, value)))
	labelOpts.Store(k, opt)
	return opt
}
