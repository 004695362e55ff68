package robustness_test

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runForking is a tool server that leaves processes behind: it starts a child, which starts two
// grandchildren, one of which calls setsid (leaving the server's group and session). Each writes its pid
// to the record file's .pids neighbour; all but the server ignore SIGTERM and stdin's end and sleep. The
// server then serves MCP as the sdk server does. Each holds the server's environment (its credential).
func runForking(kind string) {
	pids := os.Getenv(recordEnv) + ".pids"
	note := func() {
		f, err := os.OpenFile(pids, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err == nil {
			fmt.Fprintln(f, os.Getpid())
			f.Close()
		}
	}
	spawn := func(next string) {
		self, _ := os.Executable()
		c := exec.Command(self)
		c.Env = append(os.Environ(), serverKindEnv+"="+next)
		if err := c.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "forking server:", err)
			os.Exit(2)
		}
	}
	switch kind {
	case "forking":
		note()
		spawn("forkchild")
		runSDKServer()
		return
	case "forkchild":
		spawn("forkgrandchild")
		spawn("forksetsid")
	case "forksetsid":
		if _, err := syscall.Setsid(); err != nil {
			fmt.Fprintln(os.Stderr, "setsid:", err)
			os.Exit(2)
		}
	}
	signal.Ignore(syscall.SIGTERM, syscall.SIGHUP)
	note()
	for {
		time.Sleep(time.Hour)
	}
}

// gone reports whether pid is no longer a running process (missing, or a zombie: no code runs and
// nothing is held).
func gone(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

// kill -9 of the executor leaves nothing of the tool server's tree: the server, its child and both
// grandchildren (one in a session of its own) are gone, and with them the credential they held.
func TestKilledExecutorLeavesNoToolServerProcess(t *testing.T) {
	env, record := newEnv(t, "forking", nil)
	x := start(t, executorBin, env)
	x.initialize()
	var pids []int
	poll(t, "the four processes of the server's tree", x.stderr, func() bool {
		data, _ := os.ReadFile(record + ".pids")
		pids = pids[:0]
		for _, f := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
		return len(pids) == 4
	})
	t.Cleanup(func() { // after a failure, leave nothing behind
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	for _, pid := range pids {
		if gone(pid) {
			t.Fatalf("process %d of the tree is not running before the kill", pid)
		}
	}
	if err := x.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	x.wait()
	for _, pid := range pids {
		poll(t, fmt.Sprintf("process %d to be gone after kill -9 of the executor", pid), x.stderr, func() bool { return gone(pid) })
	}
}
