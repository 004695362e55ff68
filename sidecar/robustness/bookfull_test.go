package robustness_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const fullAtEnv = "MCP_EXECUTOR_FULL_AT" // the faultinject build's point at which the book is full

// serve --health with a book that is full after its first call (the
// faultinject build moves the point from 99,000 entries to 2, the slip and
// one stub): /readyz is ready and the first call answered; the next call
// gets 1001 saying the book is full, /readyz turns 503 and says why under
// "book", and /healthz stays 200 (a restart would not help).
func TestServeReadyzFalseWhenTheBookIsFull(t *testing.T) {
	needFaultBuild(t)
	t.Parallel()
	env, _ := newEnv(t, "sdk", nil)
	sock := filepath.Join(env.Dir, "executor.sock")
	cmd := exec.Command(faultBin, "serve", "--config", env.SettingsPath, "--listen", "unix:"+sock,
		"--health", "127.0.0.1:0", "--drain", "5s")
	cmd.Env = append(os.Environ(), fullAtEnv+"=2")
	log := &boundedBuffer{}
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	get := serveHealth(t, sock, log)
	poll(t, "/readyz to be ready", log, func() bool { code, _ := get("/readyz"); return code == http.StatusOK })

	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	recv := func() []byte {
		line, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatalf("reading an answer: %v\n%s", err, log)
		}
		return line
	}
	send(t, c, initializeLine)
	if line := recv(); !strings.Contains(string(line), `"result"`) {
		t.Fatalf("initialize: %s", line)
	}
	send(t, c, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(t, c, callLine("1", "echo", `{"m":"the last call with room"}`))
	wantResult(t, recv(), "1")
	if code, body := get("/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz with room in the book: %d %s", code, body)
	}
	send(t, c, callLine("2", "echo", `{"m":"no room"}`))
	e := wantError(t, recv(), "2", 1001)
	if !strings.Contains(e.Message, "the book is full") || !strings.Contains(e.Message, "new slip") {
		t.Errorf("the refusal says %q", e.Message)
	}
	poll(t, "/readyz to turn false", log, func() bool { code, _ := get("/readyz"); return code == http.StatusServiceUnavailable })
	code, body := get("/readyz")
	var ready struct {
		Ready  bool              `json:"ready"`
		Checks map[string]string `json:"checks"`
	}
	if err := json.Unmarshal([]byte(body), &ready); err != nil {
		t.Fatalf("/readyz %d %q: %v", code, body, err)
	}
	if ready.Ready || !strings.Contains(ready.Checks["book"], "the book is full") || !strings.Contains(ready.Checks["book"], "point agent.book at a new file") {
		t.Errorf("/readyz says %s", body)
	}
	if code, body := get("/healthz"); code != http.StatusOK {
		t.Errorf("/healthz with a full book: %d %s; want 200 (a restart does not help)", code, body)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := <-exited; err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatal(err)
		}
	}
	exited <- nil // for the cleanup
}
