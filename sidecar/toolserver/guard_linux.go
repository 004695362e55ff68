package toolserver

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// The guard: on Linux the executor does not start the tool server itself.
// It starts its own binary again (/proc/self/exe) with guardEnv set, and that
// process, the guard, starts the server. The guard is a child subreaper
// (PR_SET_CHILD_SUBREAPER), so every descendant of the server that loses its
// parent, a setsid grandchild included, becomes the guard's child. It holds
// the read end of a lifeline pipe whose write end only the executor holds;
// when the executor is gone, by Stop or by SIGKILL or the OOM killer, the pipe
// reads EOF and the guard kills the server's group and every descendant left,
// reaps them all and exits. The guard also ends the tree when the server
// exits by itself, as Stop did for the group before.
//
// Signals: SIGTERM sent to the guard is passed to the server's process group.
//
// Every binary that links this package runs the guard when started with
// guardEnv set (see init), so test binaries need no hook of their own.

const (
	// guardEnv marks the guard's environment; the guard removes it before
	// starting the server.
	guardEnv = "MCP_EXECUTOR_TOOLSERVER_GUARD"
	// guardArg0 is the guard's argv[0], as seen in ps.
	guardArg0 = "mcp-executor-toolserver-guard"
	// fds in the guard: the lifeline's read end and the report's write end.
	lifelineFd = 3
	reportFd   = 4

	prSetChildSubreaper = 36
)

func init() {
	if os.Getenv(guardEnv) == "1" && len(os.Args) >= 3 && os.Args[0] == guardArg0 {
		os.Exit(runGuard(os.Args[1], os.Args[2:]))
	}
}

// guarded is the executor's side of a guard.
type guarded struct {
	lifeline *os.File // write end; closing it ends the tree
}

// wrap turns cmd (the server's command, not yet started) into the guard's
// command. After cmd.Start the caller calls started.
func wrap(cmd *exec.Cmd) (g *guarded, started func() (serverPid int, err error), err error) {
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("tool server guard pipes: %w", err)
	}
	repR, repW, err := os.Pipe()
	if err != nil {
		closeAll(lifeR, lifeW)
		return nil, nil, fmt.Errorf("tool server guard pipes: %w", err)
	}
	program, argv := cmd.Path, cmd.Args
	cmd.Path = "/proc/self/exe" // the running binary, even when its file was replaced
	cmd.Args = append([]string{guardArg0, program}, argv...)
	cmd.Env = append(append([]string(nil), cmd.Env...), guardEnv+"=1")
	cmd.ExtraFiles = []*os.File{lifeR, repW} // fds 3 and 4
	g = &guarded{lifeline: lifeW}
	started = func() (int, error) {
		closeAll(lifeR, repW)
		line, err := bufio.NewReader(repR).ReadString('\n')
		_ = repR.Close() // a read end, read once
		line = strings.TrimSuffix(line, "\n")
		if msg, ok := strings.CutPrefix(line, "error: "); ok {
			return 0, errors.New(msg)
		}
		pid, perr := strconv.Atoi(line)
		if perr != nil || pid <= 0 {
			if err != nil {
				return 0, fmt.Errorf("the tool server guard gave no pid (%q): %w", line, err)
			}
			return 0, fmt.Errorf("the tool server guard gave no pid (%q)", line)
		}
		return pid, nil
	}
	return g, started, nil
}

// abandon closes the pipes of a guard that could not be started.
func (g *guarded) abandon() { _ = g.lifeline.Close() } // a pipe's write end, never written

// end asks the guard to kill the whole tree and exit: the end of its lifeline is the signal, and a
// second close (end after end) changes nothing.
func (g *guarded) end() { _ = g.lifeline.Close() }

// runGuard is the guard's main: it starts program with argv and the guard's
// environment less guardEnv, and returns the server's exit code (128+N when
// signal N ended it) once the server and every descendant are gone.
func runGuard(program string, argv []string) int {
	runtime.LockOSThread() // Pdeathsig below is tied to this thread
	syscall.CloseOnExec(lifelineFd)
	syscall.CloseOnExec(reportFd)
	report := os.NewFile(reportFd, "report")
	lifeline := os.NewFile(lifelineFd, "lifeline")
	// Signals the guard catches are reset to their defaults in the server
	// at exec; ignored ones would not be, so none is ignored.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	pid, err := startGuarded(program, argv)
	if err != nil {
		fmt.Fprintf(report, "error: %v\n", err)
		return 127
	}
	fmt.Fprintf(report, "%d\n", pid)
	_ = report.Close() // the executor has read the pid or is gone: there is no one else to tell
	dropStdio()

	gone := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, lifeline) // its end or an error: either way the executor is gone
		close(gone)
	}()
	reaped := reapChildren()
	code, ok := waitServer(pid, sigs, gone, reaped)
	if !ok {
		return 127 // cannot happen: the server is a child until reaped
	}
	// The server is gone: so is everything it left behind.
	for {
		killDescendants(os.Getpid())
		if _, ok := <-reaped; !ok {
			return code
		}
	}
}

// startGuarded makes the guard a subreaper and starts program, in a process group of its own, with the
// guard's environment less guardEnv.
func startGuarded(program string, argv []string) (int, error) {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		return 0, fmt.Errorf("tool server guard: PR_SET_CHILD_SUBREAPER: %w", errno)
	}
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, guardEnv+"=") {
			env = append(env, kv)
		}
	}
	cwd, _ := os.Getwd()
	pid, err := syscall.ForkExec(program, argv, &syscall.ProcAttr{
		Dir: cwd, Env: env, Files: []uintptr{0, 1, 2},
		Sys: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		return 0, fmt.Errorf("starting %s: %w", program, err)
	}
	return pid, nil
}

// dropStdio points the guard's stdin and stdout at /dev/null. The server has its own copies: the
// guard's go, so the executor sees the server's stdout end when the server's does. A failure is said
// on stderr (the server's stderr, which the executor logs): the guard has no one else to tell.
func dropStdio() {
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		fmt.Fprintf(os.Stderr, "tool server guard: opening %s: %v\n", os.DevNull, err)
		return
	}
	for _, fd := range []int{0, 1} {
		if err := syscall.Dup2(int(devnull.Fd()), fd); err != nil {
			fmt.Fprintf(os.Stderr, "tool server guard: closing its fd %d: %v\n", fd, err)
		}
	}
	_ = devnull.Close() // its copies on fds 0 and 1 stay open
}

// reaped is a process the guard waited for.
type reaped struct {
	pid int
	ws  syscall.WaitStatus
}

// reapChildren waits for every child (and every orphan the subreaper inherits) and sends each on the
// channel it returns, which is closed when no child is left.
func reapChildren() <-chan reaped {
	ch := make(chan reaped)
	go func() {
		defer close(ch)
		for {
			var ws syscall.WaitStatus
			p, err := syscall.Wait4(-1, &ws, 0, nil)
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			if err != nil { // ECHILD: no child and so no descendant is left
				return
			}
			ch <- reaped{p, ws}
		}
	}()
	return ch
}

// waitServer passes SIGTERM on to the server's group, kills the group when the executor is gone, and
// returns the server's exit code once it is reaped (false when the reaper ended first).
func waitServer(pid int, sigs <-chan os.Signal, gone <-chan struct{}, children <-chan reaped) (int, bool) {
	for {
		select {
		case s := <-sigs:
			if s == syscall.SIGTERM {
				_ = syscall.Kill(-pid, syscall.SIGTERM) // ESRCH: the group is gone already
			}
		case <-gone:
			_ = syscall.Kill(-pid, syscall.SIGKILL) // ESRCH: the group is gone already
			gone = nil
		case r, ok := <-children:
			if !ok {
				return 0, false
			}
			if r.pid == pid {
				if r.ws.Signaled() {
					return 128 + int(r.ws.Signal()), true
				}
				return r.ws.ExitStatus(), true
			}
		}
	}
}

// killDescendants sends SIGKILL to every process whose parent chain leads to
// root, read from /proc.
func killDescendants(root int) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	children := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ok := parentOf(pid); ok {
			children[ppid] = append(children[ppid], pid)
		}
	}
	queue := append([]int(nil), children[root]...)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		_ = syscall.Kill(pid, syscall.SIGKILL) // ESRCH: it ended on its own
		queue = append(queue, children[pid]...)
	}
}

// parentOf reads the parent pid from /proc/PID/stat; the command name in
// parentheses may hold spaces and parentheses, so fields are counted after
// the last ')'.
func parentOf(pid int) (int, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:]) // state, ppid, ...
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}
