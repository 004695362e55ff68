package sidecar

import "go.opentelemetry.io/otel"

// tracer makes one span per tool call; the SDK is set up by the command.
var tracer = otel.Tracer("github.com/seed-6e06167c/mcp-executor/sidecar")
