package sidecar

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// instrumentation is the name of the executor's tracer and meter.
const instrumentation = "github.com/seed-6e06167c/mcp-executor/sidecar"

// Span attributes of the OpenTelemetry semantic conventions for MCP and
// GenAI tool execution, and the executor's own.
const (
	AttrMCPMethod       = "mcp.method.name"
	AttrMCPSession      = "mcp.session.id"
	AttrGenAITool       = "gen_ai.tool.name"
	AttrGenAIOperation  = "gen_ai.operation.name"
	AttrJSONRPCID       = "jsonrpc.request.id"
	AttrErrorType       = "error.type"
	AttrDecision        = "mcp_executor.decision"
	AttrDenial          = "mcp_executor.denial"
	AttrServer          = "mcp_executor.server"
	AttrRefused         = "mcp_executor.refused"
	operationToolExec   = "execute_tool"
	methodToolsCall     = "tools/call"
	unlistedToolLabel   = "(unlisted)"
	defaultServerLabel  = "default"
	metaTraceparent     = "traceparent"
	metaTracestate      = "tracestate"
	spanJudge           = "judge"
	spanCopyFsync       = "copy.fsync"
	spanSign            = "sign"
	spanBookFsync       = "book.fsync"
	spanApprovalHold    = "approval.hold"
	fileCopy, fileBook  = "copy", "book"
	keysAgent, keysExec = "agent", "executor"
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

// telemetry holds the executor's tracer and instruments. The packages use
// the OTel API only; the command sets up the SDK and exporters.
type telemetry struct {
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

// durationBuckets are seconds, from 100 µs to 30 s.
var durationBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// newTelemetry makes the tracer and instruments from the providers (the
// global ones when nil). An instrument that cannot be made is a no-op one:
// the OTel API never fails a call for its telemetry.
func newTelemetry(tp trace.TracerProvider, mp metric.MeterProvider) *telemetry {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	m := mp.Meter(instrumentation)
	t := &telemetry{tracer: tp.Tracer(instrumentation), propagator: propagation.TraceContext{}}
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

// callTelemetry is one tool call's span, its children and its times.
type callTelemetry struct {
	start    time.Time
	parent   trace.SpanContext // the client's, from params._meta; zero without
	decision string
	server   string
	tool     string // the metric's label: the tool's name, or unlistedToolLabel

	mu          sync.Mutex // guards what follows: finish and send run apart
	serverSpan  trace.Span
	serverStart time.Time
	serverTime  time.Duration
	heldTime    time.Duration // waiting for a person's approval
	ended       bool
	recorded    bool // recordCall has run
}

// metaCarrier reads traceparent and tracestate from a call's params._meta.
type metaCarrier struct{ params []byte }

func (c metaCarrier) Get(key string) string {
	if key != metaTraceparent && key != metaTracestate {
		return ""
	}
	v, found, err := wire.Pointer(c.params, "/_meta/"+key)
	if err != nil || !found {
		return ""
	}
	s, ok := unquoteID(v)
	if !ok {
		return ""
	}
	return s
}
func (c metaCarrier) Set(string, string) {}
func (c metaCarrier) Keys() []string     { return []string{metaTraceparent, metaTracestate} }

// mapCarrier collects what the propagator injects.
type mapCarrier map[string]string

func (c mapCarrier) Get(k string) string { return c[k] }
func (c mapCarrier) Set(k, v string)     { c[k] = v }
func (c mapCarrier) Keys() []string {
	out := make([]string, 0, len(c))
	for k := range c {
		out = append(out, k)
	}
	return out
}

// startCall starts a tools/call's span as the line is read: the child of
// the client's traceparent (and tracestate) in params._meta, when it has a
// well-formed one.
func (s *Session) startCall(m *wire.Message) (context.Context, trace.Span, *callTelemetry) {
	t := s.e.tel
	ct := &callTelemetry{start: time.Now(), server: s.e.serverLabel(), tool: unlistedToolLabel}
	base := context.WithoutCancel(s.ctx)
	if base == nil || s.ctx == nil {
		base = context.Background()
	}
	parentCtx := base
	if m.Params != nil && m.Params[0] == '{' {
		parentCtx = t.propagator.Extract(base, metaCarrier{m.Params})
		ct.parent = trace.SpanContextFromContext(parentCtx)
	}
	ctx, span := t.tracer.Start(parentCtx, methodToolsCall, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithTimestamp(ct.start), trace.WithAttributes(
			attribute.String(AttrMCPMethod, methodToolsCall),
			attribute.String(AttrGenAIOperation, operationToolExec),
			attribute.String(AttrJSONRPCID, idText(m.ID)),
			attribute.String(AttrMCPSession, s.telemetryID()),
			attribute.String(AttrServer, ct.server),
		))
	return ctx, span, ct
}

// extractParent is the client's span context from params._meta
// (traceparent, tracestate); the zero one without a well-formed traceparent.
func extractParent(ctx context.Context, params []byte) trace.SpanContext {
	if len(params) == 0 || params[0] != '{' {
		return trace.SpanContext{}
	}
	return trace.SpanContextFromContext(propagation.TraceContext{}.Extract(ctx, metaCarrier{params}))
}

// idText is a JSON-RPC id as text: a string's value, a number's digits.
func idText(id []byte) string {
	if s, ok := unquoteID(id); ok {
		return s
	}
	return string(id)
}

// telemetryID is the session's id for mcp.session.id: the one the
// executor gives it (stdio and serve carry no MCP session header).
func (s *Session) telemetryID() string {
	s.telOnce.Do(func() { s.telID = newSessionID() })
	return s.telID
}

// sessionTelemetry is a session's id for its spans, made when first used.
type sessionTelemetry struct {
	telOnce sync.Once
	telID   string
}

// newSessionID is 16 random bytes, hex.
func newSessionID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand failed: " + err.Error()) // never happens on a supported OS
	}
	return hex.EncodeToString(b[:])
}

// serverLabel names the tool server for the metrics before the tool is
// known (and for the single "server" form): "default". named sets the
// server the tool routes to when the settings name several.
func (e *Executor) serverLabel() string { return defaultServerLabel }

// traceIDOf is the trace id the stub's provared.trace-id names: the
// client's, from the span context extracted from its _meta.
func (ct *callTelemetry) traceIDOf() string {
	if ct == nil || !ct.parent.HasTraceID() {
		return ""
	}
	return ct.parent.TraceID().String()
}

// notTakenCall ends the span of a call answered 1001 before it was taken.
func (s *Session) notTakenCall(m *wire.Message, why string) {
	_, span, ct := s.startCall(m)
	ct.decision = DecisionNotTaken
	span.SetAttributes(attribute.String(AttrDecision, DecisionNotTaken), attribute.String(AttrErrorType, "not-taken"))
	span.SetStatus(codes.Error, why)
	s.e.tel.calls.Add(context.Background(), 1, metric.WithAttributes(
		attribute.String("server", ct.server), attribute.String("tool", ct.tool), attribute.String("decision", ct.decision)))
	span.End()
}

// named records the call's tool on its span; the metric names an unlisted
// tool only as unlistedToolLabel, so its labels stay few.
func (tc *toolCall) named(name string, listed bool) {
	tc.span.SetName(methodToolsCall + " " + name)
	tc.span.SetAttributes(attribute.String(AttrGenAITool, name), attribute.String(AttrTool, name))
	if listed {
		tc.tele.tool = name
		if server := tc.s.e.serverOf(name); server != "" {
			tc.tele.server = server
			tc.span.SetAttributes(attribute.String(AttrServer, server))
		}
	}
}

// decide sets the call's decision.
func (tc *toolCall) decide(d string) {
	tc.tele.decision = d
	tc.span.SetAttributes(attribute.String(AttrDecision, d))
}

// refused records a refusal on the call's span: its code and the denial's
// fingerprint.
func (tc *toolCall) refused(code, denialFP string) {
	tc.decide(DecisionRefused)
	attrs := []attribute.KeyValue{attribute.String(AttrRefused, code), attribute.String(AttrErrorType, code)}
	if denialFP != "" {
		attrs = append(attrs, attribute.String(AttrDenial, denialFP))
	}
	tc.span.SetAttributes(attrs...)
	tc.span.SetStatus(codes.Error, "refused: "+code)
}

// child starts a child span of the call's; end it with its function.
func (tc *toolCall) child(name string) func(err error) {
	_, span := tc.s.e.tel.tracer.Start(tc.ctx, name, trace.WithSpanKind(trace.SpanKindInternal))
	return func(err error) {
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}
}

// durable times one durable write (its fsync) of the copy or the book as a
// child span of the call's and in the fsync histogram.
func (tc *toolCall) durable(file string, write func() error) error {
	spanName := spanCopyFsync
	if file == fileBook {
		spanName = spanBookFsync
	}
	end := tc.child(spanName)
	start := time.Now()
	err := write()
	tc.s.e.tel.fsyncDuration.Record(tc.ctx, time.Since(start).Seconds(), labelOpt("file", file))
	end(err)
	return err
}

// holdStarted counts a call held for a person's approval and starts its
// approval.hold span; the function it returns ends both.
func (tc *toolCall) holdStarted() func(err error) {
	t := tc.s.e.tel
	t.waitingApproval.Add(tc.ctx, 1)
	end := tc.child(spanApprovalHold)
	start := time.Now()
	return func(err error) {
		t.waitingApproval.Add(tc.ctx, -1)
		if tc.tele != nil {
			tc.tele.mu.Lock()
			tc.tele.heldTime += time.Since(start)
			tc.tele.mu.Unlock()
		}
		end(err)
	}
}

// traceMeta starts the call's server span and returns that span's context
// as the params._meta members (traceparent, and tracestate) the call is
// sent with, so that the server's spans join the trace. The arguments are
// not touched, so the provared.arguments fingerprint is the same. With no
// recording tracer it returns none: the client's own traceparent is then
// the context.
func (tc *toolCall) traceMeta() []wire.Member {
	ctx, span := tc.s.e.tel.tracer.Start(tc.ctx, methodToolsCall+" "+tc.tool, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String(AttrMCPMethod, methodToolsCall), attribute.String(AttrGenAITool, tc.tool),
			attribute.String(AttrJSONRPCID, tc.ourID), attribute.String(AttrServer, tc.tele.server)))
	ct := tc.tele
	ct.mu.Lock()
	ended := ct.ended
	if !ended {
		ct.serverSpan, ct.serverStart = span, time.Now()
	}
	ct.mu.Unlock()
	if ended {
		span.End()
		return nil
	}
	if !span.IsRecording() {
		return nil
	}
	carrier := mapCarrier{}
	tc.s.e.tel.propagator.Inject(ctx, carrier)
	var metas []wire.Member
	for _, key := range []string{metaTraceparent, metaTracestate} {
		if v, ok := carrier[key]; ok {
			metas = append(metas, wire.Member{Key: key, Value: v})
		}
	}
	return metas
}

// serverTime is the call's time with the server as serverEnded kept it,
// for the copy's receipt line; nil when it never reached the server.
func (tc *toolCall) serverTime() *time.Duration {
	if ct := tc.tele; ct != nil {
		ct.mu.Lock()
		defer ct.mu.Unlock()
		if ct.ended && ct.serverSpan != nil {
			d := ct.serverTime
			return &d
		}
	}
	return nil
}

// serverEnded ends the call's server span (when it was sent) and keeps its
// time with the server. finish calls it once.
func (tc *toolCall) serverEnded(o outcome) {
	ct := tc.tele
	if ct == nil {
		return
	}
	ct.mu.Lock()
	defer ct.mu.Unlock()
	ct.ended = true
	if ct.serverSpan == nil {
		return
	}
	ct.serverTime = time.Since(ct.serverStart)
	switch o.kind {
	case outResult:
	case outError:
		ct.serverSpan.SetAttributes(attribute.String(AttrErrorType, "jsonrpc-error"))
		ct.serverSpan.SetStatus(codes.Error, "the tool server answered with an error")
	default:
		ct.serverSpan.SetAttributes(attribute.String(AttrErrorType, outcomeErrorType(o.kind)))
		ct.serverSpan.SetStatus(codes.Error, o.noAnswerText())
	}
	ct.serverSpan.End()
}

// outcomeErrorType is error.type for an outcome with no result.
func outcomeErrorType(k outcomeKind) string {
	switch k {
	case outTimeout:
		return "timeout"
	case outCancelled:
		return "cancelled"
	case outServerExit:
		return "server-exit"
	case outUnreadable:
		return "unreadable-answer"
	case outNotDelivered:
		return "not-delivered"
	case outNotSent:
		return "not-recorded"
	case outWithdrawn:
		return "withdrawn"
	}
	return "other"
}

// recordCall records a call in the metrics once, as its slot is freed
// (before its answer is written, so that a client that reads the answer
// and then the metrics sees it counted): by server, tool and decision; its
// time with the server and its own time (held time left out) apart.
func (tc *toolCall) recordCall() {
	ct := tc.tele
	if ct == nil {
		return
	}
	ct.mu.Lock()
	if ct.recorded {
		ct.mu.Unlock()
		return
	}
	ct.recorded = true
	serverTime, heldTime := ct.serverTime, ct.heldTime
	sent := ct.serverSpan != nil
	ct.mu.Unlock()
	if ct.decision == "" {
		tc.decide(DecisionHeldEnded)
	}
	t := tc.s.e.tel
	total := time.Since(ct.start)
	labels := metric.WithAttributes(attribute.String("server", ct.server), attribute.String("tool", ct.tool),
		attribute.String("decision", ct.decision))
	t.calls.Add(tc.ctx, 1, labels)
	t.ownDuration.Record(tc.ctx, (total - serverTime - heldTime).Seconds(), labels)
	if sent {
		t.serverDuration.Record(tc.ctx, serverTime.Seconds(), metric.WithAttributes(attribute.String("server", ct.server),
			attribute.String("tool", ct.tool)))
	}
}

// endCall ends a call's span once its answer is written (and records it
// in the metrics if its slot was never freed).
func (tc *toolCall) endCall() {
	if tc.span == nil || tc.tele == nil {
		return
	}
	tc.recordCall()
	tc.span.End()
}

// log is the session's logger with the call's id, trace id and span id.
func (tc *toolCall) log() *slog.Logger {
	return tc.s.log.With(tc.logAttrs()...)
}

// logAttrs are the call id, trace id and span id every log line about a
// call carries.
func (tc *toolCall) logAttrs() []any {
	ids := tc.idAttrs()
	attrs := make([]any, len(ids))
	for i, a := range ids {
		attrs[i] = a
	}
	return attrs
}

// idAttrs are the attributes naming the call in a log line: its call id,
// and its trace and span ids when it has a span.
func (tc *toolCall) idAttrs() []slog.Attr {
	attrs := []slog.Attr{slog.String("call", tc.ourID)}
	if tc.span != nil {
		if sc := tc.span.SpanContext(); sc.IsValid() {
			attrs = append(attrs, slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
		}
	}
	return attrs
}

// copyAppend appends lines to the copy durably, counting them by kind.
func (e *Executor) copyAppend(lines ...copylog.Line) error {
	return e.countCopyLines(e.copy.Append(lines...), lines)
}

// copyAppendUnsynced appends lines the next start rebuilds when they are
// lost (copylog.Log.AppendUnsynced), counting them by kind.
func (e *Executor) copyAppendUnsynced(lines ...copylog.Line) error {
	return e.countCopyLines(e.copy.AppendUnsynced(lines...), lines)
}

func (e *Executor) countCopyLines(err error, lines []copylog.Line) error {
	if err == nil {
		for _, ln := range lines {
			e.tel.copyLines.Add(context.Background(), 1, labelOpt("kind", string(ln.Kind)))
		}
	}
	return err
}

// bookAppended counts an entry appended to the book and its bytes.
func (e *Executor) bookAppended(ctx context.Context, kind string, line book.Line) {
	n := int64(0)
	if b, err := line.Bytes(); err == nil {
		n = int64(len(b)) + 1
	}
	e.bookAppendedBytes(ctx, kind, n)
}

// bookAppendedSigned counts a stub line AppendSigned wrote and its bytes
// (measured, not put together again).
func (e *Executor) bookAppendedSigned(ctx context.Context, line book.SignedStub) {
	n := int64(0)
	if l, err := line.Len(); err == nil {
		n = int64(l) + 1
	}
	e.bookAppendedBytes(ctx, "stub", n)
}

func (e *Executor) bookAppendedBytes(ctx context.Context, kind string, n int64) {
	e.tel.bookEntries.Add(ctx, 1, labelOpt("kind", kind))
	e.tel.bookBytes.Add(ctx, n)
}

// inFlight moves the calls and bytes in flight by one call of n bytes.
func (e *Executor) inFlight(calls, n int64) {
	e.tel.callsInFlight.Add(context.Background(), calls)
	e.tel.bytesInFlight.Add(context.Background(), n)
}

// signed records one signature's time and, when it failed, its error.
func (t *telemetry) signed(ctx context.Context, keys string, start time.Time, err error) {
	if t == nil {
		return
	}
	a := labelOpt("keys", keys)
	t.signDuration.Record(ctx, time.Since(start).Seconds(), a)
	if err != nil {
		t.signErrors.Add(ctx, 1, a)
	}
}

// notTakenAnswered counts a 1001 answer under its reason's label.
func (e *Executor) notTakenAnswered(label string) {
	e.tel.notTaken.Add(context.Background(), 1, labelOpt("why", label))
}

// lineDropped counts a line from the tool server that was dropped.
func (e *Executor) lineDropped() {
	e.tel.linesDropped.Add(context.Background(), 1, metric.WithAttributes(attribute.String("server", e.serverLabel())))
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
