package robustness_test

import (
	"os"
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/copylog"
)

// Kill -9 in a run that started from the copy's checkpoint. A clean stop
// saves the checkpoint; the next run opens the copy from it, saves a new
// one at its start (nothing is unfinished then) and is killed with a call
// at the server (no stub yet) or with its stub in the book (no receipt
// line yet). The start after the kill opens the copy from that newer
// checkpoint, since only lines after it hold the unfinished call, and
// finishes the call exactly as a start that reads the whole copy: one
// receipt for it, none twice, the copy with nothing unfinished, compare 0
// and verify intact.
func TestKillAfterACleanStop(t *testing.T) {
	needFaultBuild(t)
	for _, point := range []string{pointServerWorking, pointAfterStub} {
		t.Run(point, func(t *testing.T) {
			env, record := newEnv(t, "sdk", nil)
			clean := start(t, executorBin, env)
			clean.initialize()
			clean.send(callLine("0", "echo", `{"m":"before the stop"}`))
			wantResult(t, clean.recv(), "0")
			if code := clean.stop(); code != 0 {
				t.Fatalf("the clean stop exited %d:\n%s", code, clean.ownStderr())
			}
			saved := readFile(t, copylog.CheckpointPath(env.CopyPath))

			x := start(t, faultBin, env, faultEnv+"="+point)
			x.initialize()
			call := callLine("1", "echo", `{"m":"killed-call"}`)
			if point == pointServerWorking {
				call = callLine("1", "slow", `{"MS":10000,"m":"killed-call"}`) // see TestKillAtEachStep
			}
			x.send(call)
			wantKilled(t, x, point)
			if !strings.Contains(x.ownStderr(), "copy opened from its checkpoint") {
				t.Errorf("the run after the clean stop did not open the copy from its checkpoint:\n%s", x.ownStderr())
			}
			if got := readFile(t, copylog.CheckpointPath(env.CopyPath)); string(got) == string(saved) {
				t.Error("the killed run did not save a checkpoint at its start (its last run's calls all finished)")
			}
			sent := sentCalls(readCopy(t, env))
			if len(sent) != 2 {
				t.Fatalf("calls sent: %v, want the clean run's and the killed one", sent)
			}

			again := startAfterKill(t, executorBin, env)
			again.send(callLine(`"after-restart"`, "echo", `{}`))
			wantResult(t, again.recv(), `"after-restart"`)
			if code := again.stop(); code != 0 {
				t.Errorf("the restarted executor exited %d", code)
			}
			if !strings.Contains(again.ownStderr(), "copy opened from its checkpoint") {
				t.Errorf("the start after the kill did not open the copy from its checkpoint:\n%s", again.ownStderr())
			}
			es := checkRecords(t, env, record)
			if u := copylog.UnfinishedCalls(readCopy(t, env)); len(u) != 0 {
				t.Errorf("calls still unfinished in the copy after the restart: %+v", u)
			}
			for _, call := range sent {
				if stubs := stubsFor(es, call); len(stubs) != 1 {
					t.Errorf("%d receipts for call %s, want 1", len(stubs), call)
				}
			}
		})
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
