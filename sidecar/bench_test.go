package sidecar_test

import (
	"context"
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
