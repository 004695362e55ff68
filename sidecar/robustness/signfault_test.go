package robustness_test

import (
	"strings"
	"testing"
)

const signFaultEnv = "MCP_EXECUTOR_SIGN_FAULT" // sidecar.SignFaultEnv in the faultinject build

// A signer that fails once (a key store's hiccup) is tried again: the call gets the server's answer,
// the executor goes on taking calls and exits 0, and the records agree.
func TestSignerFailingOnceIsRetried(t *testing.T) {
	needFaultBuild(t)
	env, record := newEnv(t, "sdk", nil)
	x := start(t, faultBin, env, signFaultEnv+"=fail")
	x.initialize()
	x.send(callLine("1", "echo", `{"m":"first"}`))
	wantResult(t, x.recv(), "1")
	x.send(callLine("2", "echo", `{"m":"second"}`))
	wantResult(t, x.recv(), "2")
	if code := x.stop(); code != 0 {
		t.Fatalf("exit %d after a retried signature", code)
	}
	if !strings.Contains(x.stderr.String(), "trying again") {
		t.Errorf("the retry is not logged")
	}
	if es := checkRecords(t, env, record); len(only(es, "stub")) != 2 {
		t.Errorf("%d stubs, want 2", len(only(es, "stub")))
	}
}

// A signer that hangs is cut at signTimeout (after signTries tries): the client gets an error, the
// executor stops taking calls and exits non-zero, and the next start writes the call's receipt from
// the copy.
func TestHangingSignerStopsTheExecutorAndRestartWritesReceipt(t *testing.T) {
	needFaultBuild(t)
	env, record := newEnv(t, "sdk", map[string]any{"signTimeout": 200, "signTries": 2})
	x := start(t, faultBin, env, signFaultEnv+"=hang")
	x.initialize()
	x.send(callLine("1", "echo", `{"m":"hung"}`))
	wantError(t, x.recv(), "1", -32603)
	if code := x.wait(); code == 0 {
		t.Fatalf("the executor exited 0 after it stopped taking calls; want non-zero so that it is restarted")
	}
	if !strings.Contains(x.stderr.String(), "takes no more calls") {
		t.Errorf("the stop is not logged")
	}
	sent := sentCalls(readCopy(t, env))
	if len(sent) != 1 {
		t.Fatalf("copy sent lines %v, want one", sent)
	}
	es := restartAndCheck(t, env, record)
	stubs := stubsFor(es, sent[0])
	if len(stubs) != 1 || stubs[0].details()[labelWrittenLate] == "" {
		t.Fatalf("the call whose signature hung has %d receipts (details %v); want one written late", len(stubs), stubs)
	}
}
