package sidecar_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkToolCall measures an allowed tool call through the executor
// against the same go-sdk server without it, with 1 and 16 calls in flight.
// The executor's added time per call is the difference of the ns/op of the
// "executor" and "direct" runs at the same number in flight; calls/s is
// reported beside.
func BenchmarkToolCall(b *testing.B) {
	for _, inFlight := range []int{1, 16} {
		b.Run("direct/inflight="+itoa(inFlight), func(b *testing.B) {
			self, err := os.Executable()
			if err != nil {
				b.Fatal(err)
			}
			dir := b.TempDir()
			cmd := exec.Command(self)
			cmd.Env = append(os.Environ(), testServerEnv+"=sdk", recordEnv+"="+dir+"/record.jsonl")
			c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
			cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			runCalls(b, cs, inFlight)
		})
		b.Run("executor/inflight="+itoa(inFlight), func(b *testing.B) {
			// The default maxWaiting (16): 16 in flight must get no 1001.
			h := startWith(b, "sdk", baseOptions())
			cs := h.client(context.Background())
			defer cs.Close()
			runCalls(b, cs, inFlight)
		})
	}
}

func runCalls(b *testing.B, cs *mcp.ClientSession, inFlight int) {
	ctx := context.Background()
	params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "bench"}}
	if _, err := cs.CallTool(ctx, params); err != nil { // warm up
		b.Fatal(err)
	}
	b.ResetTimer()
	if inFlight == 1 {
		for i := 0; i < b.N; i++ {
			if _, err := cs.CallTool(ctx, params); err != nil {
				b.Fatal(err)
			}
		}
	} else {
		b.SetParallelism((inFlight + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				res, err := cs.CallTool(ctx, params)
				if err != nil || res.IsError {
					b.Errorf("call: %v %+v", err, res)
					return
				}
			}
		})
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}

// BenchmarkTelemetry measures what tracing and metrics add per call: the same allowed call through
// the executor with the OpenTelemetry SDK off (OTEL_SDK_DISABLED=true: the API's no-ops) and on
// (a span per call and its children, sampled, exported by OTLP/HTTP to a sink in this process; the
// metrics recorded and exported by OTLP too, beside the Prometheus reader), side by side at 1 and
// 16 calls in flight. The ratio of the "on" and "off" ns/op is the cost.
func BenchmarkTelemetry(b *testing.B) {
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	defer sink.Close()
	for _, inFlight := range []int{1, 16} {
		for _, mode := range []string{"off", "on"} {
			b.Run("telemetry="+mode+"/inflight="+itoa(inFlight), func(b *testing.B) {
				if mode == "off" {
					b.Setenv("OTEL_SDK_DISABLED", "true")
				} else {
					b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", sink.URL)
					b.Setenv("OTEL_METRIC_EXPORT_INTERVAL", "1000")
				}
				h := startWith(b, "sdk", baseOptions())
				cs := h.client(context.Background())
				defer cs.Close()
				runCalls(b, cs, inFlight)
			})
		}
	}
}
