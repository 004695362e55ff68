package robustness_test

import (
	"strings"
	"syscall"
	"testing"
)

// SIGTERM to stdio with a call in flight: the call finishes with the server's real result within the
// drain (the server's input is not closed under it), a call sent after the signal gets 1001, the
// executor exits 143, and the records agree.
func TestStdioSigtermLetsCallsInFlightFinish(t *testing.T) {
	env, record := newEnv(t, "sdk", nil)
	x := start(t, executorBin, env)
	x.initialize()
	x.send(callLine("1", "slow", `{"MS":1500}`))
	poll(t, "the slow call's sent line", x.stderr, func() bool { return len(sentCalls(readCopyLoose(env))) == 1 })
	if err := x.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	poll(t, "the drain to begin", x.stderr, func() bool { return strings.Contains(x.stderr.String(), "draining calls in flight") })
	x.send(callLine("2", "echo", `{}`))
	wantError(t, x.recv(), "2", 1001)
	res := wantResult(t, x.recv(), "1")
	if res.IsError {
		t.Fatalf("the call in flight at SIGTERM: %+v", res)
	}
	if code := x.wait(); code != 143 {
		t.Fatalf("exit %d after SIGTERM, want 143", code)
	}
	if es := checkRecords(t, env, record); len(only(es, "stub")) != 1 {
		t.Errorf("%d stubs, want 1", len(only(es, "stub")))
	}
}
