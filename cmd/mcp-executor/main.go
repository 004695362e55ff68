// Command mcp-executor stands between an AI agent's MCP client and an MCP tool server: it judges every
// tool call against the person's signed permission, records a signed receipt or denial for it in the
// agent's book, and keeps its own tagged copy of every call.
//
// Subcommands (run `mcp-executor help` for the flags of each):
//
//	stdio    run the executor for one MCP client on standard input and output
//	serve    run the executor on a Unix socket, one session per connection
//	bridge   connect standard input and output to a `serve` socket
//	keys     make missing keys and print what goes into the permission
//	check    read the settings, keys, slip, book and credentials; write nothing
//	verify   check a book
//	compare  compare the executor's copy with the book
//	demo     a self-contained demonstration with development keys
//	version  the version (also --version): the one stamped in at build time, or else the
//	         module's version from the build information (go install …@v1.2.3 says v1.2.3)
//
// Environment:
//
//	OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_TRACES_EXPORTER,
//	OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES and the other standard OTEL_* variables: where the
//	traces and metrics go by OTLP/HTTP (a span per tool call, joined to the client's traceparent).
//	No endpoint set: nothing is sent. Metrics are also served as Prometheus text on /metrics at
//	serve's --health address. OTEL_SDK_DISABLED=true turns both off.
//	MCP_EXECUTOR_LOG_LEVEL: debug, info (default), warn or error. Logs are JSON on standard error.
//
// Standard output carries only the MCP protocol (stdio, bridge) or the command's report.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/seed-6e06167c/mcp-executor/sidecar/cli"
)

func main() {
	os.Exit(run())
}

func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	tel, err := setupTelemetry(ctx)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mcp-executor: setting up OpenTelemetry: %v\n", err)
		return cli.ExitUsage
	}
	info, ok := debug.ReadBuildInfo()
	code := cli.Main(ctx, cli.Env{
		Args:    os.Args[1:],
		Stdin:   os.Stdin,
		Stdout:  os.Stdout,
		Stderr:  os.Stderr,
		Version: versionText(version, info, ok),
		Metrics: tel.metrics,
	})
	if err := tel.shutdown(context.Background()); err != nil {
		fmt.Fprintf(os.Stderr, "mcp-executor: flushing telemetry: %v\n", err)
	}
	return code
}
