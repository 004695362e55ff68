package robustness_test

import (
	"encoding/json"
	"strconv"
	"testing"
)

// BenchmarkBigCalls sends 1 and 16 tool calls of exactly 16 MiB at once to
// the executor (the built binary, a child process) and reports its peak
// resident set (VmHWM) once they are answered: peak-MiB, and calls refused
// with 1001 for want of room. maxBytesWaiting is raised so that all 16 may
// be in flight at once (the default, 64 MiB, refuses most of them). The
// last runs the 16 under GOMEMLIMIT=320MiB, as the chart's goMemLimit sets
// one: the executor holds about 290 MiB then, and Go's collector left to
// itself lets the heap grow to about twice what is live.
func BenchmarkBigCalls(b *testing.B) {
	for _, c := range []struct {
		name     string
		inFlight int
		env      []string
	}{{"inflight=1", 1, nil}, {"inflight=16", 16, nil}, {"inflight=16/GOMEMLIMIT=320MiB", 16, []string{"GOMEMLIMIT=320MiB"}}} {
		b.Run(c.name, func(b *testing.B) {
			var hwm int64
			var refused int
			for b.Loop() {
				hwm, refused = bigCalls(b, c.inFlight, c.env...)
			}
			b.ReportMetric(float64(hwm)/1024, "peak-MiB")
			b.ReportMetric(float64(refused), "refused")
		})
	}
}

// bigCalls runs one executor (with extraEnv added to its environment),
// sends n calls of 16 MiB and waits for every answer; it returns the
// executor's VmHWM (KiB) and how many were refused.
func bigCalls(b *testing.B, n int, extraEnv ...string) (int64, int) {
	env, _ := newEnv(b, "hostile", map[string]any{"maxBytesWaiting": (n + 1) * (17 << 20)})
	x := start(b, executorBin, env, extraEnv...)
	x.initialize()
	for i := range n {
		x.send(paddedCall(strconv.Itoa(i+1), "big-"+strconv.Itoa(i), bigLine-1))
	}
	refused := 0
	for range n {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		line := x.recv()
		if err := json.Unmarshal(line, &m); err != nil {
			b.Fatalf("answer: %v", err)
		}
		switch {
		case m.Error != nil && m.Error.Code == 1001:
			refused++
		case m.Error != nil || m.Result == nil:
			b.Fatalf("call %s: %.300s", m.ID, line)
		}
	}
	hwm := x.sampleHWM()
	if code := x.stop(); code != 0 {
		b.Fatalf("exit code %d", code)
	}
	if refused == n {
		b.Fatalf("all %d calls were refused", n)
	}
	return hwm, refused
}
