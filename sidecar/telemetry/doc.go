// Package telemetry is the executor's OpenTelemetry: the tracer and the
// instruments ([New]), the names of its spans, attributes and metrics, the
// decisions a call is counted under, and [Call], one tool call's span with
// its children, its times and its labels.
//
// The packages use the OTel API only; the command sets up the SDK and the
// exporters. The tracer and the meter keep the engine's instrumentation
// name (package sidecar), which dashboards and collectors know them by.
//
// # A call's spans
//
// A tools/call's span ("tools/call <tool>", kind server) is the child of
// the client's trace context in params._meta (traceparent and tracestate),
// when it has a well-formed one; its children time the judging, the copy's
// and the book's fsyncs, the signatures and the wait for a person's
// approval; the call sent to the tool server is a client span whose
// context goes to the server in params._meta. Its metrics are counted once,
// as its answer is about to be written.
package telemetry
