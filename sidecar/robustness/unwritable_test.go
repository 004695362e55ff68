package robustness_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
)

// immutable makes the file refuse every write, even through a descriptor
// opened before (chattr +i: the kernel's own EPERM; root's rights do not
// pass it, as they pass a mode of 0444), and undoes it at cleanup.
func immutable(t *testing.T, path string) {
	t.Helper()
	if out, err := exec.Command("chattr", "+i", path).CombinedOutput(); err != nil {
		t.Fatalf("chattr +i %s: %v: %s", path, err, out)
	}
	t.Cleanup(func() { mutable(t, path) })
}

func mutable(t *testing.T, path string) {
	t.Helper()
	if out, err := exec.Command("chattr", "-i", path).CombinedOutput(); err != nil {
		t.Errorf("chattr -i %s: %v: %s", path, err, out)
	}
}

// The book is made read-only while the executor runs. A call sent before
// it was known gets no receipt now: the client gets -32603 (not the
// server's answer), the copy keeps the outcome in a not-written line, and
// the executor takes no more calls: it ends the session and exits non-zero,
// so that it is started again (nothing more is sent). The next start, with
// the book writable again, writes the receipt from the copy.
func TestBookReadOnlyMidRun(t *testing.T) {
	env, record := newEnv(t, "hostile", nil)
	x := start(t, executorBin, env)
	x.initialize()
	x.send(callLine("1", "echo", `{"m":"before"}`))
	wantResult(t, x.recv(), "1")

	immutable(t, env.BookPath)
	x.send(callLine("2", "echo", `{"m":"while-read-only"}`))
	wantError(t, x.recv(), "2", codeInternal)
	if code := x.wait(); code == 0 {
		t.Errorf("the executor exited 0 after it stopped taking calls; want non-zero so that it is started again")
	}

	if serverRead(t, record, "after-stop") {
		t.Error("the server received a call made after the executor stopped")
	}
	calls := serverCalls(t, record)
	if len(calls) != 2 {
		t.Fatalf("the server received %v, want the calls before and while the book was read-only", calls)
	}
	lines := readCopy(t, env)
	var outcome string
	for _, l := range lines {
		if l.Kind == "not-written" && l.Call == calls[1].ID && l.Outcome != nil {
			outcome = l.Outcome.Name + "=" + l.Outcome.SHA256
		}
	}
	wantOutcome := labelToolResult + "=" + resultFP(t, fill(hostileAnswers["echo"], []byte(`"x"`)))
	if outcome != wantOutcome {
		t.Errorf("the copy's not-written line for the call holds %q, want %q", outcome, wantOutcome)
	}
	if code, out := compare(t, env); code != 1 || !strings.Contains(out, "not written") {
		t.Errorf("compare before the restart: exit %d, want 1 naming the call not written:\n%s", code, out)
	}

	// While the book stays read-only, the executor does not start.
	x2 := start(t, executorBin, env)
	if code := x2.wait(); code == 0 {
		t.Errorf("the executor started with a book it cannot write")
	}

	mutable(t, env.BookPath)
	x3 := start(t, executorBin, env)
	x3.initialize()
	x3.send(callLine("5", "echo", `{"m":"after-restart"}`))
	wantResult(t, x3.recv(), "5")
	if code := x3.stop(); code != 0 {
		t.Errorf("exit %d after the restart", code)
	}
	es := checkRecords(t, env, record)
	late := stubsFor(es, calls[1].ID)
	if len(late) == 1 {
		d := late[0].details()
		if labelToolResult+"="+d[labelToolResult] != wantOutcome || d[labelWrittenLate] == "" {
			t.Errorf("the receipt written at the restart names %v, want the outcome from the copy and executor.written-late", d)
		}
	}
}

// A denial while the book is read-only: the client is still told the call
// is not taken, and nothing is sent then or after. The denial the book
// lacks is a discrepancy compare must name: it is not one the hourly cap
// left out.
func TestBookReadOnlyDenial(t *testing.T) {
	env, record := newEnv(t, "hostile", nil)
	x := start(t, executorBin, env)
	x.initialize()
	immutable(t, env.BookPath)
	x.send(callLine("1", "notinslip", `{"m":"refused-read-only"}`))
	line := x.recv()
	x.send(callLine("2", "echo", `{"m":"allowed-read-only"}`))
	line2 := x.recv()
	x.stop()
	t.Logf("with the book read-only, the refused call was answered %s", line)
	t.Logf("and the allowed call %s", line2)
	if !notTaken(line) || bytes.Contains(line, []byte("red.prova/denial")) {
		t.Errorf("the refused call was answered %s, want a tool error (or an error) naming no denial", line)
	}
	if !notTaken(line2) {
		t.Errorf("the allowed call, with a book that cannot be written, was answered %s; it must not be taken", line2)
	}
	if calls := serverCalls(t, record); len(calls) != 0 {
		t.Errorf("the server received %v while the book could not be written", calls)
	}
	mutable(t, env.BookPath)
	x2 := start(t, executorBin, env)
	x2.initialize()
	x2.send(callLine("3", "echo", `{}`))
	wantResult(t, x2.recv(), "3")
	x2.stop()
	checkBookAndReceipts(t, env, record)
	code, out := compare(t, env)
	t.Logf("compare says:\n%s", out)
	if code != 1 || strings.Contains(out, "hourly cap") {
		t.Errorf("compare exit %d: the denials the book could not take are reported as left out by the hourly cap "+
			"(or not at all); the copy's denial line carries no refusal and no reason, so compare cannot tell a "+
			"write failure from the cap. Want exit 1 naming each denial the book lacks", code)
	}
}

// notTaken reports whether an answer says the call was not taken: a
// JSON-RPC error, or a tool result with isError.
func notTaken(line []byte) bool {
	var m struct {
		Result *struct {
			IsError bool `json:"isError"`
		} `json:"result"`
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(line, &m) != nil {
		return false
	}
	return m.Error != nil || (m.Result != nil && m.Result.IsError)
}

// mountTmpfs mounts a tmpfs of the given size at dir and unmounts it at
// cleanup (after the executors started later have ended).
func mountTmpfs(t *testing.T, dir, size string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount tmpfs at %s: %v: %s", dir, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
			if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
				t.Errorf("umount -l %s: %v: %s", dir, err, out)
			}
		}
	})
}

// fillUp writes a file in dir until the file system is full and returns
// its path.
func fillUp(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 512)
	for {
		if _, err := f.Write(block); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling %s: %v", dir, err)
			}
			break
		}
	}
	// Whole pages may still be free to a file that already owns a part
	// of one: fill by single bytes too.
	for {
		if _, err := f.Write([]byte{0}); err != nil {
			break
		}
	}
	return path
}

// setCopyPath points the settings' executor.copy at another file.
func setCopyPath(t *testing.T, env *devsetup.Env, copyPath string) {
	t.Helper()
	data, err := os.ReadFile(env.SettingsPath)
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	s["executor"].(map[string]any)["copy"] = copyPath
	data, err = json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(env.SettingsPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	env.CopyPath = copyPath
}

// The copy is on a file system that fills up while the executor runs.
// The copy's last page may still hold a line or two, so calls go on until
// one cannot be recorded: from then on every call is answered 1001 and
// none reaches the server; a call whose receipt line found no room keeps
// its answer (its stub is in the book). The executor then stops taking
// calls, and stdio ends its session and exits 1 so that it is started
// again: a call the client sends once that is under way may find the
// output ended rather than a 1001 — also an answer that sends nothing.
// No half line is left, and the next start, once there is room, agrees
// with the book.
func TestCopyOnFullFileSystem(t *testing.T) {
	env, record := newEnv(t, "hostile", nil)
	fs := filepath.Join(env.Dir, "copyfs")
	mountTmpfs(t, fs, "64k")
	setCopyPath(t, env, filepath.Join(fs, "copy.jsonl"))

	x := start(t, executorBin, env)
	x.initialize()
	x.send(callLine("1", "echo", `{"m":"with-room"}`))
	wantResult(t, x.recv(), "1")
	filler := fillUp(t, fs)

	var refused, unanswered []string
	ended := false
	for i := 2; i < 40 && !ended; i++ {
		id := strconv.Itoa(i)
		x.send(callLine(id, "echo", `{"m":"full-`+id+`-"}`))
		line, ok := x.recvOrEnd()
		if !ok {
			ended = true
			unanswered = append(unanswered, id)
			break
		}
		var m struct {
			Error *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("call %s: %s", id, line)
		}
		switch {
		case m.Error == nil && len(refused) > 0:
			t.Errorf("call %s was taken after call %s was not", id, refused[0])
		case m.Error == nil:
		case m.Error.Code != codeNotTaken:
			t.Errorf("call %s: error %d %q, want 1001", id, m.Error.Code, m.Error.Message)
		default:
			if len(refused) == 0 && !strings.Contains(m.Error.Message, "record") && !strings.Contains(m.Error.Message, "no more calls") {
				t.Errorf("the first 1001 says %q, not that the call could not be recorded", m.Error.Message)
			}
			refused = append(refused, id)
		}
		if len(refused) == 3 {
			break
		}
	}
	if len(refused) == 0 && !ended {
		t.Fatal("every call was taken with the copy's file system full")
	}
	t.Logf("calls refused once the copy was full: %v, unanswered as the executor exited: %v; copy lines then: %v",
		refused, unanswered, copyKinds(readCopy(t, env)))
	if !ended {
		x.send(callLine("99", "notinslip", `{"m":"refused-after-full"}`))
		if line, ok := x.recvOrEnd(); ok {
			wantError(t, line, "99", codeNotTaken)
		}
	}
	code := x.stop()
	if code != 1 {
		t.Errorf("the executor exits %d after the copy could not be written, want 1", code)
	}
	if !strings.Contains(x.ownStderr(), "the executor takes no more calls until it is started again") {
		t.Errorf("stderr does not say the executor stopped taking calls:\n%s", x.ownStderr())
	}
	for _, id := range append(refused, unanswered...) {
		if serverRead(t, record, "full-"+id+"-") {
			t.Errorf("the server received call %s, which was answered 1001", id)
		}
	}
	data, err := os.ReadFile(env.CopyPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		t.Errorf("the copy was left with a partial line")
	}
	readCopy(t, env) // it still checks

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	x2 := start(t, executorBin, env)
	x2.initialize()
	x2.send(callLine("100", "echo", `{"m":"room-again"}`))
	wantResult(t, x2.recv(), "100")
	if code := x2.stop(); code != 0 {
		t.Errorf("exit %d after the restart", code)
	}
	checkRecords(t, env, record)
}
