package robustness_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
)

// The five points in a call's path at which the faultinject build kills
// the executor (internal/faultinject; the calls are in sidecar/toolcall.go
// and sidecar/scribe.go).
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

// wantKilled waits for the faultinject build to end and fails the test
// unless SIGKILL at the fault point (e.g. "after-stub#2") ended it.
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

// startAfterKill starts bin on a folder a killed executor left and runs the
// handshake; when the executor does not start it says why, naming a torn
// last line for what it is.
func startAfterKill(t *testing.T, bin string, env *devsetup.Env, extra ...string) *executor {
	t.Helper()
	x := start(t, bin, env, extra...)
	x.send(initializeLine)
	select {
	case r, ok := <-x.lines:
		if !ok || r.err != nil {
			x.wait()
			why := startFailure(x)
			if strings.Contains(why, "torn") || strings.Contains(why, "cut") {
				t.Fatalf("the executor does not start again after kill -9: %s\n"+
					"SIGKILL inside the write(2) of a book or copy line (a write another goroutine, the group commit, "+
					"was making when the fault point fired) leaves a prefix of the line without its LF; the start "+
					"refuses it instead of recovering. See TestRestartAfterTornBookWrite", why)
			}
			t.Fatalf("the executor does not start again: %s", why)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no answer to initialize from the restarted executor")
	}
	x.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return x
}

// restartAndCheck starts the normal build (which writes the receipts of
// calls the killed one left), makes one more call, stops it and checks the
// records: verify intact, compare 0, exactly one receipt for every call
// the server received, and nothing left unfinished in the copy.
func restartAndCheck(t *testing.T, env *devsetup.Env, record string) []entry {
	t.Helper()
	x := startAfterKill(t, executorBin, env)
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
			env, record := newEnv(t, "sdk", nil) // a real go-sdk server
			x := start(t, faultBin, env, faultEnv+"="+point)
			x.initialize()
			call := callLine("1", "echo", `{"m":"killed-call"}`)
			if point == pointServerWorking {
				// The server holds its answer, so "written to the server, no
				// stub yet" is the state the kill leaves however the load
				// delays the goroutine that reaches the fault point: a fast
				// echo could be answered and its stub written first.
				call = callLine("1", "slow", `{"MS":10000,"m":"killed-call"}`)
			}
			x.send(call)
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

// The same for the copy: a kill inside the write(2) of a copy line (the
// receipt line of a call, which now follows its answer, or the group
// commit of another call's lines) leaves a prefix of the line without its
// LF. That write was never acknowledged, so the start keeps the torn bytes
// aside in COPY.torn-<time>, cuts the copy back to its last whole line and
// writes the receipt line again from the stub in the book.
func TestRestartAfterTornCopyWrite(t *testing.T) {
	needFaultBuild(t)
	env, record := newEnv(t, "sdk", nil)
	x := start(t, faultBin, env, faultEnv+"="+pointAfterStub)
	x.initialize()
	x.send(callLine("1", "echo", `{}`))
	wantKilled(t, x, pointAfterStub)
	sent := sentCalls(readCopy(t, env))
	f, err := os.OpenFile(env.CopyPath, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"call":"` + sent[0] + `","kind":"rec`); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	es := restartAndCheck(t, env, record)
	if len(sent) != 1 || len(stubsFor(es, sent[0])) != 1 {
		t.Errorf("the call whose receipt line was torn: sent %v, %d receipts", sent, len(stubsFor(es, sent[0])))
	}
	kept, err := filepath.Glob(env.CopyPath + ".torn-*")
	if err != nil || len(kept) != 1 {
		t.Fatalf("the torn bytes kept aside: %v, %v", kept, err)
	}
	if data, err := os.ReadFile(kept[0]); err != nil || !bytes.HasSuffix(data, []byte(`"kind":"rec`)) {
		t.Errorf("%s holds %q (%v)", kept[0], data, err)
	}
}

// The kill -9 at a fault point can land while another goroutine is inside
// the write(2) of a stub line (the group commit of the call before): the
// kernel then stops the write at a page and leaves a prefix of the line
// without its LF. The random runs meet this now and then; here the state is
// made on purpose: the executor is killed after a call's stub is durable,
// and the stub's line is then cut as such a kill leaves it (a test cannot
// aim SIGKILL inside one write(2), so it writes the bytes the kernel would
// leave). Issue 5 asks that every restart after kill -9 recover: the torn
// entry was never acknowledged (no answer went out, the copy has no receipt
// line for the call), so the start can set the torn bytes aside and write
// the call's receipt from the copy.
func TestRestartAfterTornBookWrite(t *testing.T) {
	needFaultBuild(t)
	env, record := newEnv(t, "hostile", nil)
	x := start(t, faultBin, env, faultEnv+"="+pointAfterStub)
	x.initialize()
	x.send(callLine("1", "echo", `{}`))
	wantKilled(t, x, pointAfterStub)
	data, err := os.ReadFile(env.BookPath)
	if err != nil {
		t.Fatal(err)
	}
	last := bytes.LastIndexByte(data[:len(data)-1], '\n') + 1
	torn := data[:last+(len(data)-last)/2]
	if err := os.WriteFile(env.BookPath, torn, 0o644); err != nil {
		t.Fatal(err)
	}
	sent := sentCalls(readCopy(t, env))
	es := restartAndCheck(t, env, record)
	if len(sent) == 1 && len(stubsFor(es, sent[0])) != 1 {
		t.Errorf("the call whose stub was torn has %d receipts", len(stubsFor(es, sent[0])))
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
// history grows: each run starts the faultinject build (which first writes
// the receipts the last killed run left), sends bursts of calls and is
// killed at a random point on a random passage. After about half the runs
// the normal build restarts, recovers and is checked; the others go
// straight on to the next killed run, so that recovery also starts from
// the state a killed recovery-and-run left. Set ROBUSTNESS_SEED to replay.
func TestKillAtRandomPoints(t *testing.T) {
	needFaultBuild(t)
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	env, record := newEnv(t, "hostile", nil)
	const runs = 20
	for run := 0; run < runs; run++ {
		point := faultPoints[rng.IntN(len(faultPoints))] + "#" + strconv.Itoa(1+rng.IntN(3))
		x := startAfterKill(t, faultBin, env, faultEnv+"="+point)
		for round := 0; round < 8 && roundCalls(t, x, rng, run, round); round++ {
		}
		x.in.Close()
		wantKilled(t, x, point)
		unfinished := len(copylog.UnfinishedCalls(readCopy(t, env)))
		checked := run == runs-1 || rng.IntN(2) == 0
		if checked {
			restartAndCheck(t, env, record)
		}
		t.Logf("run %d: killed at %s; %d calls received so far, %d left unfinished, checked: %v",
			run, point, len(serverCalls(t, record)), unfinished, checked)
		if t.Failed() {
			t.Fatalf("run %d (fault %s, seed %d) failed", run, point, seed)
		}
	}
	if n := len(serverCalls(t, record)); n < runs {
		t.Errorf("only %d calls reached the server over %d runs", n, runs)
	}
}
