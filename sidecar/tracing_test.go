package sidecar_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/sidecar/telemetry"
)

// One span per tool call, with the executor's call id as an attribute.
func TestOneSpanPerToolCall(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	o, _ := serverOpts(t, "sdk", baseOptions())
	env, err := devsetup.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	_, h := inProcess(t, env)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := h.client(ctx)
	for _, name := range []string{"echo", "unlisted_tool"} {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}}); err != nil {
			t.Fatal(err)
		}
	}
	cs.Close()
	<-h.done
	h.done <- 0
	var ids []string
	for _, s := range rec.Ended() {
		if s.SpanKind() != trace.SpanKindServer || !strings.HasPrefix(s.Name(), "tools/call") {
			continue
		}
		for _, a := range s.Attributes() {
			if string(a.Key) == telemetry.AttrCallID {
				ids = append(ids, a.Value.AsString())
			}
		}
	}
	if len(ids) != 2 || !strings.HasPrefix(ids[0], "provared-") || ids[0] == ids[1] {
		t.Errorf("spans with call ids %v", ids)
	}
}
