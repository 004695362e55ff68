package robustness_test

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/internal/testenv"
)

// The five points in a call's path at which the faultinject build kills
// the executor (sidecar/faultinject_on.go; the calls are in toolcall.go
// and scribe.go).
const (
	pointBeforeCopySent = "before-copy-sent" // judged; the copy's sent line not yet written
	pointAfterCopySent  = "after-copy-sent"  // the sent line durable; nothing sent to the server
	pointServerWorking  = "server-working"   // the call written to the server
	pointAfterAnswer    = "after-answer"     // the outcome known; no stub yet
	pointAfterStub      = "after-stub"       // the stub durable in the book; the copy's receipt line not yet written
)

var faultPoints = []string{pointBeforeCopySent, pointAfterCopySent, pointServerWorking, pointAfterAnswer, pointAfterStub}

func needFaultBuild(t *testing.T) {
	t.Helper()
	if faultBin == "" {
		t.Fatalf("the executor does not build with -tags faultinject:\n%s", faultBuild)
	}
}

// startKilled starts the faultinject build with the fault at point (e.g.
// "after-stub#2"), runs calls, and waits until it is killed.
func wantKilled(t *testing.T, x *executor, point string) {
	t.Helper()
	x.wait()
	if x.sig != int(syscall.SIGKILL) {
		t.Fatalf("the executor was not killed at %s (exit %d, signal %d): is faultPoint(%q) in the engine's call path?",
			point, x.code, x.sig, point)
	}
}

// sentCalls lists the call ids of the copy's sent lines.
func sentCalls(lines []copylog.Line) []string {
	var out []string
	for _, l := range lines {
		if l.Kind == copylog.KindSent {
			out = append(out, l.Call)
		}
	}
	return out
}

// restartAndCheck starts the normal build (which writes the receipts of
// calls the killed one left), makes one more call, stops it and checks the
// records: verify intact, compare 0, exactly one receipt for every call
// the server received, and nothing left unfinished in the copy.
func restartAndCheck(t *testing.T, env *testenv.Env, record string) []entry {
	t.Helper()
	x := start(t, executorBin, env)
	x.initialize()
	x.send(callLine(`"after-restart"`, "echo", `{}`))
	wantResult(t, x.recv(), `"after-restart"`)
	if code := x.stop(); code != 0 {
		t.Errorf("the restarted executor exited %d", code)
	}
	es := checkRecords(t, env, record)
	if u := copylog.UnfinishedCalls(readCopy(t, env)); len(u) != 0 {
		t.Errorf("calls still unfinished in the copy after the restart: %+v", u)
	}
	return es
}

// Kill -9 at each step of a call, restart, and show: every call the server
// received has exactly one receipt, none has two, compare exits 0 and
// verify says intact; and what each step leaves before the restart.
func TestKillAtEachStep(t *testing.T) {
	needFaultBuild(t)
	for _, point := range faultPoints {
		t.Run(point, func(t *testing.T) {
			env, record := newEnv(t, "hostile", nil)
			x := start(t, faultBin, env, faultEnv+"="+point)
			x.initialize()
			x.send(callLine("1", "echo", `{"m":"killed-call"}`))
			wantKilled(t, x, point)

			lines := readCopy(t, env)
			sent := sentCalls(lines)
			es := readBook(t, env.BookPath)
			received := serverCalls(t, record)
			switch point {
			case pointBeforeCopySent:
				if len(sent) != 0 || len(received) != 0 || len(only(es, "stub")) != 0 {
					t.Errorf("killed before the copy line: sent %v, server %v, %d stubs; want none", sent, received, len(only(es, "stub")))
				}
			case pointAfterCopySent:
				if len(sent) != 1 || len(received) != 0 || len(only(es, "stub")) != 0 {
					t.Errorf("killed after the copy line: sent %v, server %v, %d stubs; want 1, none, none", sent, received, len(only(es, "stub")))
				}
			case pointServerWorking, pointAfterAnswer:
				if len(sent) != 1 || len(only(es, "stub")) != 0 {
					t.Errorf("killed at %s: sent %v, %d stubs; want 1 sent and no stub", point, sent, len(only(es, "stub")))
				}
				if point == pointAfterAnswer && len(received) != 1 {
					t.Errorf("killed after the answer: the server received %v", received)
				}
			case pointAfterStub:
				if len(sent) != 1 || len(only(es, "stub")) != 1 || copyKinds(lines)[copylog.KindReceipt] != 0 {
					t.Errorf("killed after the stub: sent %v, %d stubs, copy %v; want 1, 1 and no receipt line", sent, len(only(es, "stub")), copyKinds(lines))
				}
			}

			es = restartAndCheck(t, env, record)
			if len(sent) == 0 {
				return
			}
			stubs := stubsFor(es, sent[0])
			if len(stubs) != 1 {
				t.Fatalf("%d receipts for the killed call", len(stubs))
			}
			d := stubs[0].details()
			if point == pointAfterStub {
				if d[labelToolResult] == "" || d[labelWrittenLate] != "" {
					t.Errorf("the stub written before the kill names %v; want the tool result and no executor.written-late", d)
				}
				return
			}
			if d[labelError] != fp(textStoppedWhileSent) || d[labelWrittenLate] == "" {
				t.Errorf("the receipt written at the restart names %v; want provared.error of the stopped text and executor.written-late", d)
			}
		})
	}
}

// roundCalls sends a burst of calls and reads their answers until all came
// or the executor's output ended; it reports whether the executor is still
// up.
func roundCalls(t *testing.T, x *executor, rng *rand.Rand, run, round int) bool {
	t.Helper()
	k := 1 + rng.IntN(4)
	want := map[string]bool{}
	for i := 0; i < k; i++ {
		id := `"r` + strconv.Itoa(run) + `-` + strconv.Itoa(round) + `-` + strconv.Itoa(i) + `"`
		switch rng.IntN(6) {
		case 0:
			x.send(callLine(id, "notinslip", `{}`))
		case 1, 2:
			x.send(callLine(id, "slow", `{"ms":`+strconv.Itoa(rng.IntN(40))+`}`))
		default:
			x.send(callLine(id, "echo", `{"n":`+strconv.Itoa(rng.IntN(1000))+`}`))
		}
		want[id] = true
	}
	for len(want) > 0 {
		select {
		case r, ok := <-x.lines:
			if !ok || r.err != nil {
				return false
			}
			var m struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal(r.line, &m) == nil {
				delete(want, string(m.ID))
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("run %d: no answer in 30s", run)
		}
	}
	return true
}

// Kill -9 at random points over many runs, on one working folder whose
// history grows: each run kills the faultinject build at a random point on
// a random passage while bursts of calls are in flight, then the normal
// build restarts, recovers and is checked. Set ROBUSTNESS_SEED to replay.
func TestKillAtRandomPoints(t *testing.T) {
	needFaultBuild(t)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("ROBUSTNESS_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("ROBUSTNESS_SEED=%d", seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	env, record := newEnv(t, "hostile", nil)
	const runs = 20
	for run := 0; run < runs; run++ {
		point := faultPoints[rng.IntN(len(faultPoints))] + "#" + strconv.Itoa(1+rng.IntN(3))
		x := start(t, faultBin, env, faultEnv+"="+point)
		x.initialize()
		for round := 0; round < 8 && roundCalls(t, x, rng, run, round); round++ {
		}
		x.in.Close()
		wantKilled(t, x, point)
		before := len(serverCalls(t, record))
		restartAndCheck(t, env, record)
		if t.Failed() {
			t.Fatalf("run %d (fault %s, seed %d) failed; the server had received %d calls", run, point, seed, before)
		}
	}
	if n := len(serverCalls(t, record)); n < runs {
		t.Errorf("only %d calls reached the server over %d runs", n, runs)
	}
}
