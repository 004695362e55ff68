package toolserver

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/internal/syncbuf"
)

// The tests start this test binary again as the tool server: childEnv names
// what the child does.
const childEnv = "TOOLSERVER_TEST_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(runChild(mode))
	}
	os.Exit(m.Run())
}

// pass copies src to dst in a server mode; a failed copy ends the child
// with exit 9, which the test sees.
func pass(dst io.Writer, src io.Reader) {
	if _, err := io.Copy(dst, src); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(9)
	}
}

func runChild(mode string) int {
	switch mode {
	case "env":
		env := os.Environ()
		sort.Strings(env)
		fmt.Println(strings.Join(env, "\n"))
		return 0
	case "echo": // copy stdin to stdout, exit at EOF
		pass(os.Stdout, os.Stdin)
		return 0
	case "exit":
		n, _ := strconv.Atoi(os.Args[1])
		return n
	case "stderr":
		fmt.Fprintln(os.Stderr, "hello")
		fmt.Fprint(os.Stderr, "partial")
		fmt.Fprint(os.Stderr, " line\n")
		if _, err := os.Stderr.Write(bytes.Repeat([]byte("f"), 1<<20)); err != nil {
			return 9
		}
		fmt.Fprintln(os.Stderr)
		fmt.Fprint(os.Stderr, "last without newline")
		return 0
	case "stubborn": // ignore stdin's end and SIGTERM
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("ready")
		pass(io.Discard, os.Stdin)
		for {
			time.Sleep(time.Hour)
		}
	case "term": // ends at SIGTERM, not at stdin's end
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGTERM)
		fmt.Println("ready")
		go pass(io.Discard, os.Stdin)
		<-c
		return 3
	case "parent": // start a grandchild that ignores everything, then wait for stdin's end
		self, _ := os.Executable()
		gc := exec.Command(self)
		gc.Env = []string{childEnv + "=stubborn"}
		out, _ := gc.StdoutPipe()
		if err := gc.Start(); err != nil {
			return 9
		}
		if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
			return 9
		}
		fmt.Println(gc.Process.Pid)
		pass(io.Discard, os.Stdin)
		return 0
	case "tree": // a forking server: a child with two grandchildren, one of them in a session of its own
		signal.Ignore(syscall.SIGTERM)
		fmt.Println(os.Getpid())
		_, lines, err := startAndRead("treechild", 3)
		if err != nil {
			return 9
		}
		for _, line := range lines {
			fmt.Println(line)
		}
		pass(io.Discard, os.Stdin)
		for {
			time.Sleep(time.Hour)
		}
	case "treechild":
		signal.Ignore(syscall.SIGTERM)
		fmt.Println(os.Getpid())
		for _, mode := range []string{"stubborn", "setsid"} {
			pid, _, err := startAndRead(mode, 1)
			if err != nil {
				return 9
			}
			fmt.Println(pid)
		}
		for {
			time.Sleep(time.Hour)
		}
	case "setsid": // leave the server's process group and session
		if _, err := syscall.Setsid(); err != nil {
			return 9
		}
		signal.Ignore(syscall.SIGTERM)
		fmt.Println(os.Getpid())
		for {
			time.Sleep(time.Hour)
		}
	case "middletree": // an executor with a forking server, killed with SIGKILL by the test
		self, _ := os.Executable()
		p, err := Start(context.Background(), Spec{Command: self, Env: map[string]string{childEnv: "tree"}})
		if err != nil {
			return 9
		}
		r := bufio.NewReader(p.Stdout)
		fmt.Println(p.cmd.Process.Pid) // the guard
		for range 4 {
			line, err := r.ReadString('\n')
			if err != nil {
				return 9
			}
			fmt.Print(line)
		}
		for {
			time.Sleep(time.Hour)
		}
	case "middle": // an executor that starts a server and is then killed
		self, _ := os.Executable()
		p, err := Start(context.Background(), Spec{Command: self, Env: map[string]string{childEnv: "stubborn"}})
		if err != nil {
			return 9
		}
		if _, err := bufio.NewReader(p.Stdout).ReadString('\n'); err != nil {
			return 9
		}
		fmt.Println(p.Pid())
		for {
			time.Sleep(time.Hour)
		}
	}
	if run, ok := moreChildModes[mode]; ok {
		return run()
	}
	return 100
}

// startAndRead starts this binary in mode with stdout piped and reads n
// lines from it; the process is left running.
func startAndRead(mode string, n int) (int, []string, error) {
	self, _ := os.Executable()
	c := exec.Command(self)
	c.Env = []string{childEnv + "=" + mode}
	out, err := c.StdoutPipe()
	if err != nil {
		return 0, nil, err
	}
	if err := c.Start(); err != nil {
		return 0, nil, err
	}
	r := bufio.NewReader(out)
	var lines []string
	for range n {
		line, err := r.ReadString('\n')
		if err != nil {
			return 0, nil, err
		}
		lines = append(lines, strings.TrimSuffix(line, "\n"))
	}
	return c.Process.Pid, lines, nil
}

func self(t *testing.T) string {
	t.Helper()
	p, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func spec(t *testing.T, mode string, args ...string) Spec {
	return Spec{Command: self(t), Args: args, Env: map[string]string{childEnv: mode}, ShutdownWait: 5 * time.Second}
}

func start(t *testing.T, s Spec) *Process {
	t.Helper()
	p, err := Start(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Stop(context.Background()); err != nil {
			t.Errorf("stopping the server: %v", err)
		}
	})
	return p
}

// alive reports whether pid is a running process (not gone, not a zombie).
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still alive", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func readLine(t *testing.T, r io.Reader) string {
	t.Helper()
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the child: %v", err)
	}
	return strings.TrimSuffix(line, "\n")
}

func TestEnvironmentIsolated(t *testing.T) {
	t.Setenv("TOOLSERVER_AGENT_SECRET", "agent-secret")
	t.Setenv("LANG", "C.UTF-8")
	t.Setenv("TOOLSERVER_PASSED", "yes")
	if err := os.Unsetenv("TOOLSERVER_ABSENT"); err != nil {
		t.Fatal(err)
	}
	s := spec(t, "env")
	s.Env["API_TOKEN"] = "server-credential"
	s.Env["LANG"] = "de_DE.UTF-8" // Env wins over PassEnv
	s.PassEnv = []string{"LANG", "TOOLSERVER_PASSED", "TOOLSERVER_ABSENT"}
	p := start(t, s)
	out, err := io.ReadAll(p.Stdout)
	if err != nil {
		t.Fatal(err)
	}
	if code, err := p.Wait(); code != 0 || err != nil {
		t.Fatalf("exit %d %v", code, err)
	}
	got := strings.Split(strings.TrimSpace(string(out)), "\n")
	want := []string{"API_TOKEN=server-credential", "LANG=de_DE.UTF-8", childEnv + "=env", "TOOLSERVER_PASSED=yes"}
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("child environment:\n%s\nwant:\n%s", out, strings.Join(want, "\n"))
	}
}

func TestEnviron(t *testing.T) {
	t.Parallel()
	got := Environ(map[string]string{"B": "1"}, []string{"A", "B", "C"}, []string{"A=x=y", "B=2", "D=4", "A=second", "bad"})
	if strings.Join(got, " ") != "A=x=y B=1" {
		t.Fatalf("got %v", got)
	}
	if got := Environ(nil, nil, os.Environ()); got == nil || len(got) != 0 {
		t.Fatalf("empty environment must be an empty, non-nil list: %#v", got)
	}
}

func TestPipesAndExitCode(t *testing.T) {
	t.Parallel()
	p := start(t, spec(t, "echo"))
	if _, err := p.Stdin.Write([]byte("ping\n")); err != nil {
		t.Fatal(err)
	}
	if line := readLine(t, p.Stdout); line != "ping" {
		t.Fatalf("echo %q", line)
	}
	if err := p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if code, _ := p.Wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}

	p = start(t, spec(t, "exit", "7"))
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Done not closed")
	}
	if code, err := p.Wait(); code != 7 || err != nil {
		t.Fatalf("exit %d %v", code, err)
	}
}

func TestStderrPrefixedAndBounded(t *testing.T) {
	t.Parallel()
	var buf syncbuf.Buffer
	s := spec(t, "stderr")
	s.Stderr = &buf
	p := start(t, s)
	p.Wait()
	if err := p.Stop(context.Background()); err != nil { // waits for the copy to finish
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines", len(lines))
	}
	if lines[0] != "[server] hello" || lines[1] != "[server] partial line" || lines[3] != "[server] last without newline" {
		t.Fatalf("lines %q %q %q", lines[0], lines[1], lines[3])
	}
	want := StderrPrefix + strings.Repeat("f", MaxStderrLine) + CutMark
	if lines[2] != want {
		t.Fatalf("flood line of %d bytes, want %d", len(lines[2]), len(want))
	}
	if buf.Writes() != 4 {
		t.Fatalf("%d writes for 4 lines: each line must be one write", buf.Writes())
	}
}

func TestLookup(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "fake-server")
	if err := os.Symlink(self(t), prog); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "not-exec"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	// In server.path: found, no warning.
	s := spec(t, "exit", "0")
	s.Command, s.Path = "fake-server", []string{t.TempDir(), dir}
	p := start(t, s)
	if p.Path != prog || len(p.Warnings) != 0 {
		t.Fatalf("path %s warnings %v", p.Path, p.Warnings)
	}
	if code, _ := p.Wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	// Through our own PATH: found, with a warning.
	t.Setenv("PATH", dir)
	s.Path = nil
	p = start(t, s)
	if p.Path != prog || len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "PATH") {
		t.Fatalf("path %s warnings %v", p.Path, p.Warnings)
	}
	p.Wait()
	// Relative path with a separator: read against Dir.
	s.Command, s.Dir = "./fake-server", dir
	p = start(t, s)
	if p.Path != prog {
		t.Fatalf("path %s", p.Path)
	}
	p.Wait()
	// Not found, not executable: errors naming the command.
	for _, c := range []struct {
		cmd  string
		path []string
	}{{"no-such-server", []string{dir}}, {"no-such-server", nil}, {"not-exec", []string{dir}}, {filepath.Join(dir, "none"), nil}} {
		_, err := Start(context.Background(), Spec{Command: c.cmd, Path: c.path})
		if err == nil || !strings.Contains(err.Error(), c.cmd) {
			t.Errorf("Start(%s) error %v", c.cmd, err)
		}
	}
}

func TestStopEscalates(t *testing.T) {
	t.Parallel()
	s := spec(t, "stubborn")
	s.ShutdownWait, s.TermWait = 100*time.Millisecond, 100*time.Millisecond
	p := start(t, s)
	readLine(t, p.Stdout)
	if err := p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if code, _ := p.Wait(); code != 128+int(syscall.SIGKILL) {
		t.Fatalf("exit %d, want SIGKILL's", code)
	}
	waitGone(t, p.Pid())

	s = spec(t, "term")
	s.ShutdownWait = 100 * time.Millisecond
	p = start(t, s)
	readLine(t, p.Stdout)
	if err := p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if code, _ := p.Wait(); code != 3 {
		t.Fatalf("exit %d, want 3 (ended by its SIGTERM handler)", code)
	}
}

func TestStopKillsGroup(t *testing.T) {
	t.Parallel()
	s := spec(t, "parent")
	s.ShutdownWait, s.TermWait = 2*time.Second, 100*time.Millisecond
	p := start(t, s)
	gc, err := strconv.Atoi(readLine(t, p.Stdout))
	if err != nil {
		t.Fatal(err)
	}
	if !alive(gc) {
		t.Fatal("grandchild not running")
	}
	if err := p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if code, _ := p.Wait(); code != 0 {
		t.Fatalf("the server ends at stdin's end: exit %d", code)
	}
	waitGone(t, gc)
}

func TestContextEndKills(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	p, err := Start(ctx, spec(t, "stubborn"))
	if err != nil {
		t.Fatal(err)
	}
	readLine(t, p.Stdout)
	cancel()
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("not killed when the context ended")
	}
	if code, _ := p.Wait(); code != 128+int(syscall.SIGKILL) {
		t.Fatalf("exit %d", code)
	}
}

// The server dies with the executor: a middle process (the executor) starts
// a server that ignores stdin's end and SIGTERM, and is killed with SIGKILL.
func TestDiesWithExecutor(t *testing.T) {
	t.Parallel()
	mid := exec.Command(self(t))
	mid.Env = []string{childEnv + "=middle"}
	out, err := mid.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := mid.Start(); err != nil {
		t.Fatal(err)
	}
	defer mid.Wait()
	pid, err := strconv.Atoi(readLine(t, out))
	if err != nil {
		t.Fatal(err)
	}
	if !alive(pid) {
		t.Fatal("server not running")
	}
	mid.Process.Kill()
	waitGone(t, pid)
}

// The whole tree dies with the executor: a forking server (a child, a
// grandchild, and a grandchild that called setsid, all ignoring SIGTERM and
// stdin's end) leaves no process after a SIGKILL of the executor, and the
// guard is gone too.
func TestTreeDiesWithKilledExecutor(t *testing.T) {
	t.Parallel()
	mid := exec.Command(self(t))
	mid.Env = []string{childEnv + "=middletree"}
	out, err := mid.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := mid.Start(); err != nil {
		t.Fatal(err)
	}
	var pids []int
	t.Cleanup(func() { // after a failure, leave nothing behind
		mid.Process.Kill()
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		mid.Wait()
	})
	r := bufio.NewReader(out)
	for range 5 { // guard, server, child, grandchild, setsid grandchild
		pid, err := strconv.Atoi(readLine(t, r))
		if err != nil {
			t.Fatal(err)
		}
		if !alive(pid) {
			t.Fatalf("process %d not running before the kill", pid)
		}
		pids = append(pids, pid)
	}
	if err := mid.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		waitGone(t, pid)
	}
}
