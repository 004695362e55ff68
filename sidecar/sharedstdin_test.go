package sidecar_test

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
)

// TestKilledExecutorLeavesAParentsPipeBlocking: the executor reads its
// standard input through Go's poller, yet the pipe its parent gave it, and
// still holds, stays in blocking mode while the executor runs and after a
// kill -9 (which runs nothing at exit): the parent's own reads of that pipe
// never fail with EAGAIN because of it.
func TestKilledExecutorLeavesAParentsPipeBlocking(t *testing.T) {
	t.Parallel()
	if executorBin == "" {
		t.Fatal("the executor binary was not built")
	}
	o, _ := serverOpts(t, "sdk", baseOptions())
	env, err := devsetup.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe() // os.StartProcess makes r blocking, as a shell's pipe is
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	blocking := func(when string) {
		t.Helper()
		// Not r.Fd(), which would itself put the pipe in blocking mode.
		rc, err := r.SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		var flags int
		var ferr error
		if err := rc.Control(func(fd uintptr) { flags, ferr = unix.FcntlInt(fd, unix.F_GETFL, 0) }); err != nil || ferr != nil {
			t.Fatal(err, ferr)
		}
		if flags&unix.O_NONBLOCK != 0 {
			t.Fatalf("%s, the parent's pipe is non-blocking", when)
		}
	}
	cmd := exec.Command(executorBin, "stdio", "--config", env.SettingsPath)
	cmd.Stdin = r // the parent keeps its read end open
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	if _, err := w.WriteString(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n"); err != nil {
		t.Fatal(err)
	}
	answered := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		answered <- line
	}()
	select {
	case line := <-answered:
		if !strings.Contains(line, `"id":1`) {
			t.Fatalf("no answer to initialize: %q", line)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no answer to initialize")
	}
	blocking("while the executor reads it")
	if err := cmd.Process.Signal(unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait() // killed: the error says so
	blocking("after a kill -9")
}
