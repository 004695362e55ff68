package telemetry

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// Call is one tool call's telemetry: its span, its children, its times
// and the labels it is counted under.
type Call struct {
	t        *Telemetry
	ctx      context.Context // the span's
	span     trace.Span
	start    time.Time
	parent   trace.SpanContext // the client's, from params._meta; zero without
	decision string
	server   string
	tool     string // the metric's label: the tool's name, or unlistedToolLabel

	mu          sync.Mutex // guards what follows: the call's end and its send run apart
	serverSpan  trace.Span
	serverStart time.Time
	serverTime  time.Duration
	heldTime    time.Duration // waiting for a person's approval
	ended       bool
	recorded    bool // Record has run
}

// callCarrier hands the propagator the trace context of a call's
// params._meta, as wire.ReadCall read it.
type callCarrier struct{ traceparent, tracestate string }

func (c callCarrier) Get(key string) string {
	switch key {
	case wire.MetaTraceparent:
		return c.traceparent
	case wire.MetaTracestate:
		return c.tracestate
	}
	return ""
}
func (c callCarrier) Set(string, string) {}
func (c callCarrier) Keys() []string     { return []string{wire.MetaTraceparent, wire.MetaTracestate} }

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

// StartCall starts a tools/call's span as its line is read, under base:
// the child of the client's traceparent (and tracestate) in params._meta,
// when params is an object with a well-formed one. m is the line's
// reading, call its params read, session the session's id.
func (t *Telemetry) StartCall(base context.Context, m *wire.Message, call *wire.Call, session string) *Call {
	c := &Call{t: t, start: time.Now(), server: DefaultServer, tool: unlistedToolLabel}
	parentCtx := base
	if m.Params != nil && m.Params[0] == '{' {
		parentCtx = t.propagator.Extract(base, callCarrier{call.Traceparent, call.Tracestate})
		c.parent = trace.SpanContextFromContext(parentCtx)
	}
	c.ctx, c.span = t.tracer.Start(parentCtx, methodToolsCall, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithTimestamp(c.start), trace.WithAttributes(
			attribute.String(AttrMCPMethod, methodToolsCall),
			attribute.String(AttrGenAIOperation, operationToolExec),
			attribute.String(AttrJSONRPCID, idText(m.ID)),
			attribute.String(AttrMCPSession, session),
			attribute.String(AttrServer, c.server),
		))
	return c
}

// NotTakenCall records a call answered 1001 before it was taken: its span,
// ended at once with why as its status, and its count.
func (t *Telemetry) NotTakenCall(base context.Context, m *wire.Message, call *wire.Call, session, why string) {
	c := t.StartCall(base, m, call, session)
	c.decision = DecisionNotTaken
	c.span.SetAttributes(attribute.String(AttrDecision, DecisionNotTaken), attribute.String(AttrErrorType, "not-taken"))
	c.span.SetStatus(codes.Error, why)
	t.calls.Add(context.Background(), 1, metric.WithAttributes(
		attribute.String("server", c.server), attribute.String("tool", c.tool), attribute.String("decision", c.decision)))
	c.span.End()
}

// idText is a JSON-RPC id as text: a string's value, a number's digits.
func idText(id []byte) string {
	if s, ok := wire.Unquote(id); ok {
		return s
	}
	return string(id)
}

// Context is the context of the call's span: the call's records are
// written under it, whatever becomes of the session's.
func (c *Call) Context() context.Context { return c.ctx }

// TraceID is the trace id the stub's provared.trace-id names: the
// client's, from the span context of its _meta; "" without one.
func (c *Call) TraceID() string {
	if c == nil || !c.parent.HasTraceID() {
		return ""
	}
	return c.parent.TraceID().String()
}

// CallID puts the executor's call id on the span.
func (c *Call) CallID(id string) { c.span.SetAttributes(attribute.String(AttrCallID, id)) }

// Named records the call's tool on its span; the metric names an unlisted
// tool only as "(unlisted)", so its labels stay few. server is the server
// the tool routes to ("" for the single "server" form).
func (c *Call) Named(name, server string, listed bool) {
	c.span.SetName(methodToolsCall + " " + name)
	c.span.SetAttributes(attribute.String(AttrGenAITool, name), attribute.String(AttrTool, name))
	if listed {
		c.tool = name
		if server != "" {
			c.server = server
			c.span.SetAttributes(attribute.String(AttrServer, server))
		}
	}
}

// Decide sets the call's decision.
func (c *Call) Decide(d string) {
	c.decision = d
	c.span.SetAttributes(attribute.String(AttrDecision, d))
}

// Withdrawn decides a call cancelled before it was sent, and says so in
// its span's status.
func (c *Call) Withdrawn() {
	c.Decide(DecisionWithdrawn)
	c.span.SetStatus(codes.Error, "withdrawn")
}

// Refused records a refusal on the call's span: its code and the denial's
// fingerprint ("" when none was written).
func (c *Call) Refused(code, denialFP string) {
	c.Decide(DecisionRefused)
	attrs := []attribute.KeyValue{attribute.String(AttrRefused, code), attribute.String(AttrErrorType, code)}
	if denialFP != "" {
		attrs = append(attrs, attribute.String(AttrDenial, denialFP))
	}
	c.span.SetAttributes(attrs...)
	c.span.SetStatus(codes.Error, "refused: "+code)
}

// Stub names the call's stub on its span.
func (c *Call) Stub(fp string) { c.span.SetAttributes(attribute.String(AttrStub, fp)) }

// NoAnswer says on the span why a sent call's client got no answer of the
// server's: errorType for error.type, why for the status.
func (c *Call) NoAnswer(errorType, why string) {
	c.span.SetAttributes(attribute.String(AttrErrorType, errorType))
	c.span.SetStatus(codes.Error, why)
}

// ReceiptNotWritten says on the span that the call's receipt could not be
// written.
func (c *Call) ReceiptNotWritten() {
	c.span.SetAttributes(attribute.String(AttrErrorType, "receipt-not-written"))
	c.span.SetStatus(codes.Error, "receipt not written")
}

// HeldFor puts the time the call waited for a person on its span.
func (c *Call) HeldFor(d time.Duration) {
	c.span.SetAttributes(attribute.Int64(attrHeldMS, d.Milliseconds()))
}

// Approved names on the span the request for approval that let the call
// through.
func (c *Call) Approved(requestID string) {
	c.span.SetAttributes(attribute.String(attrApprovalReq, requestID))
}

// Child starts a child span of the call's (SpanJudge, SpanSign); end it
// with its function.
func (c *Call) Child(name string) func(err error) {
	_, span := c.t.tracer.Start(c.ctx, name, trace.WithSpanKind(trace.SpanKindInternal))
	return func(err error) {
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}
}

// Durable times one durable write (its fsync) of the copy or the book
// (FileCopy, FileBook) as a child span of the call's and in the fsync
// histogram.
func (c *Call) Durable(file string, write func() error) error {
	spanName := spanCopyFsync
	if file == FileBook {
		spanName = spanBookFsync
	}
	end := c.Child(spanName)
	start := time.Now()
	err := write()
	c.t.fsyncDuration.Record(c.ctx, time.Since(start).Seconds(), labelOpt("file", file))
	end(err)
	return err
}

// HoldStarted counts a call held for a person's approval and starts its
// approval.hold span; the function it returns ends both, and the time held
// is left out of the executor's own time.
func (c *Call) HoldStarted() func(err error) {
	c.t.waitingApproval.Add(c.ctx, 1)
	end := c.Child(spanApprovalHold)
	start := time.Now()
	return func(err error) {
		c.t.waitingApproval.Add(c.ctx, -1)
		c.mu.Lock()
		c.heldTime += time.Since(start)
		c.mu.Unlock()
		end(err)
	}
}

// ToServer starts the call's server span (the call sent as callID) and
// returns that span's context as the params._meta members (traceparent,
// and tracestate) the call is sent with, so that the server's spans join
// the trace. The arguments are not touched, so the provared.arguments
// fingerprint is the same. With no recording tracer it returns none: the
// client's own traceparent is then the context.
func (c *Call) ToServer(tool, callID string) []wire.Member {
	ctx, span := c.t.tracer.Start(c.ctx, methodToolsCall+" "+tool, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String(AttrMCPMethod, methodToolsCall), attribute.String(AttrGenAITool, tool),
			attribute.String(AttrJSONRPCID, callID), attribute.String(AttrServer, c.server)))
	c.mu.Lock()
	ended := c.ended
	if !ended {
		c.serverSpan, c.serverStart = span, time.Now()
	}
	c.mu.Unlock()
	if ended {
		span.End()
		return nil
	}
	if !span.IsRecording() {
		return nil
	}
	carrier := mapCarrier{}
	c.t.propagator.Inject(ctx, carrier)
	var metas []wire.Member
	for _, key := range []string{wire.MetaTraceparent, wire.MetaTracestate} {
		if v, ok := carrier[key]; ok {
			metas = append(metas, wire.Member{Key: key, Value: v})
		}
	}
	return metas
}

// ServerEnded ends the call's server span (when it was sent) and keeps its
// time with the server; call it once, as the call gets its outcome.
// errorType is "" for a result; otherwise it is the span's error.type and
// why its status.
func (c *Call) ServerEnded(errorType, why string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ended = true
	if c.serverSpan == nil {
		return
	}
	c.serverTime = time.Since(c.serverStart)
	if errorType != "" {
		c.serverSpan.SetAttributes(attribute.String(AttrErrorType, errorType))
		c.serverSpan.SetStatus(codes.Error, why)
	}
	c.serverSpan.End()
}

// ServerTime is the call's time with the server as ServerEnded kept it
// (the copy's receipt line holds it, for report); nil when the call never
// reached the server.
func (c *Call) ServerTime() *time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ended || c.serverSpan == nil {
		return nil
	}
	d := c.serverTime
	return &d
}

// Record records the call in the metrics once, as its slot is freed
// (before its answer is written, so that a client that reads the answer
// and then the metrics sees it counted): by server, tool and decision; its
// time with the server and its own time (held time left out) apart.
func (c *Call) Record() {
	c.mu.Lock()
	if c.recorded {
		c.mu.Unlock()
		return
	}
	c.recorded = true
	serverTime, heldTime := c.serverTime, c.heldTime
	sent := c.serverSpan != nil
	c.mu.Unlock()
	if c.decision == "" {
		c.Decide(DecisionHeldEnded)
	}
	total := time.Since(c.start)
	labels := metric.WithAttributes(attribute.String("server", c.server), attribute.String("tool", c.tool),
		attribute.String("decision", c.decision))
	c.t.calls.Add(c.ctx, 1, labels)
	c.t.ownDuration.Record(c.ctx, (total - serverTime - heldTime).Seconds(), labels)
	if sent {
		c.t.serverDuration.Record(c.ctx, serverTime.Seconds(), metric.WithAttributes(attribute.String("server", c.server),
			attribute.String("tool", c.tool)))
	}
}

// End ends the call's span once its answer is written (and records it in
// the metrics if Record has not run).
func (c *Call) End() {
	c.Record()
	c.span.End()
}

// LogAttrs are the attributes naming the call in a log line: its call id,
// and its trace and span ids.
func (c *Call) LogAttrs(callID string) []slog.Attr {
	attrs := []slog.Attr{slog.String("call", callID)}
	if c != nil {
		if sc := c.span.SpanContext(); sc.IsValid() {
			attrs = append(attrs, slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
		}
	}
	return attrs
}
