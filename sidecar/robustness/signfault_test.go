package robustness_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
)

const signFaultEnv = "MCP_EXECUTOR_SIGN_FAULT" // faultinject.SignFaultEnv in the faultinject build

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

// serve with a signer that hangs: the first call's signature is cut at signTimeout, the executor stops
// taking calls, /healthz and /readyz answer 503 while serve drains the call still in flight, serve exits
// non-zero, and the next start writes both calls' receipts from the copy.
func TestServeReportsAStoppedExecutorAndExitsNonZero(t *testing.T) {
	needFaultBuild(t)
	env, record := newEnv(t, "sdk", map[string]any{"signTimeout": 2000, "signTries": 1})
	sock := filepath.Join(env.Dir, "executor.sock")
	cmd := exec.Command(faultBin, "serve", "--config", env.SettingsPath, "--listen", "unix:"+sock,
		"--health", "127.0.0.1:0", "--drain", "20s")
	cmd.Env = append(os.Environ(), signFaultEnv+"=hang")
	log := &boundedBuffer{}
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan int, 1)
	go func() {
		err := cmd.Wait()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		exited <- code
	}()
	t.Cleanup(func() { cmd.Process.Kill() })
	get := serveHealth(t, sock, log)
	dial := func() (net.Conn, *bufio.Reader) {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		r := bufio.NewReader(c)
		send(t, c, initializeLine)
		if line, err := r.ReadString('\n'); err != nil || !strings.Contains(line, `"result"`) {
			t.Fatalf("initialize: %q %v", line, err)
		}
		send(t, c, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		return c, r
	}
	a, ar := dial()
	b, br := dial()
	send(t, a, callLine("1", "echo", `{"m":"signature hangs"}`))
	poll(t, "the first call's sent line", log, func() bool { return len(sentCalls(readCopyLoose(env))) == 1 })
	send(t, b, callLine("2", "slow", `{"MS":4000}`))
	poll(t, "the second call's sent line", log, func() bool { return len(sentCalls(readCopyLoose(env))) == 2 })
	poll(t, "/healthz to fail", log, func() bool {
		code, body := get("/healthz")
		return code == http.StatusServiceUnavailable && strings.Contains(body, "takes no more calls")
	})
	if code, body := get("/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "takes no more calls") {
		t.Fatalf("/readyz while the stopped executor drains: %d %s", code, body)
	}
	for _, r := range []*bufio.Reader{ar, br} {
		line, err := r.ReadString('\n')
		if err != nil || !strings.Contains(line, `"code":-32603`) {
			t.Fatalf("a call whose receipt could not be signed: %q %v", line, err)
		}
	}
	select {
	case code := <-exited:
		if code == 0 {
			t.Fatalf("serve exited 0 after the executor stopped taking calls\n%s", log)
		}
	case <-time.After(time.Minute):
		t.Fatalf("serve did not exit after the executor stopped taking calls\n%s", log)
	}
	sent := sentCalls(readCopy(t, env))
	es := restartAndCheck(t, env, record)
	for _, c := range sent {
		if stubs := stubsFor(es, c); len(stubs) != 1 || stubs[0].details()[labelWrittenLate] == "" {
			t.Errorf("call %s has %d receipts; want one written late", c, len(stubs))
		}
	}
}

// readCopyLoose reads the copy for polling: nil while it cannot be read.
func readCopyLoose(env *devsetup.Env) []copylog.Line {
	lines, err := copylog.ReadFile(env.CopyPath, env.CopyKey, "test executor")
	if err != nil {
		return nil
	}
	return lines
}

// serveHealth waits for serve's socket and for the health address serve
// logs, and returns a GET of a path there: its status and body.
func serveHealth(t *testing.T, sock string, log *boundedBuffer) func(path string) (int, string) {
	t.Helper()
	poll(t, "the socket", log, func() bool { _, err := os.Stat(sock); return err == nil })
	var health string
	poll(t, "the health address in the log", log, func() bool {
		for _, l := range strings.Split(log.String(), "\n") {
			var e struct{ Msg, Address string }
			if json.Unmarshal([]byte(l), &e) == nil && e.Msg == "health endpoint" {
				health = e.Address
				return true
			}
		}
		return false
	})
	return func(path string) (int, string) {
		resp, err := http.Get("http://" + health + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
}

// poll waits for cond, failing the test after 30 seconds.
func poll(t *testing.T, what string, log fmt.Stringer, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s\n%s", what, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// send writes one line to the executor.
func send(t *testing.T, w io.Writer, line string) {
	t.Helper()
	if _, err := io.WriteString(w, line+"\n"); err != nil {
		t.Fatalf("sending %q: %v", line, err)
	}
}
