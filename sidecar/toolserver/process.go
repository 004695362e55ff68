package toolserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Spec says what to start.
type Spec struct {
	Command string   // an absolute or relative path, or a bare name looked up in Path
	Args    []string // arguments after the command
	Dir     string   // working folder; "" for the executor's own
	// Path is the folders a bare Command is looked up in. Empty means the
	// executor's own PATH, and Start returns a warning.
	Path []string
	// Env holds the server's variables with their values already read.
	Env map[string]string
	// PassEnv names variables copied from the executor's environment when
	// present there. Env wins over PassEnv.
	PassEnv []string
	// Stderr receives the server's stderr, line by line, each prefixed with
	// StderrPrefix; a *StderrLog instead reads it as it comes and logs it
	// redacted (closed when the server's stderr ends). nil discards it (it
	// is still read).
	Stderr io.Writer
	// ShutdownWait is how long Stop waits after closing stdin.
	ShutdownWait time.Duration
	// TermWait is how long Stop waits after SIGTERM; 0 means DefaultTermWait.
	TermWait time.Duration
}

const (
	// StderrPrefix begins every line copied from the server's stderr.
	StderrPrefix = "[server] "
	// MaxStderrLine is the most bytes of one stderr line copied; the rest of
	// the line is dropped and the copy ends with CutMark.
	MaxStderrLine = 16 << 10
	// CutMark ends a stderr line that was cut.
	CutMark = " [cut]"
	// DefaultTermWait is how long Stop waits after SIGTERM before SIGKILL.
	DefaultTermWait = 2 * time.Second
)

// Process is a running tool server.
type Process struct {
	// Stdin is the server's input; Stop closes it.
	Stdin io.WriteCloser
	// Stdout is the server's output. The caller reads it until EOF.
	Stdout io.ReadCloser
	// Warnings holds what the caller should log (such as a command found
	// through the executor's own PATH).
	Warnings []string
	// Path is the program that was started.
	Path string

	cmd      *exec.Cmd
	guard    *guarded // nil outside Linux: the server is cmd itself
	pgid     int      // the server's pid and process group
	termWait time.Duration
	wait     time.Duration
	done     chan struct{}
	code     int
	waitErr  error
	stderrCh chan struct{}
	stderrR  *os.File
	stopOnce sync.Once
	stopErr  error
}

// Environ builds the server's environment: Env, then each PassEnv variable
// present in environ (KEY=VALUE entries, such as os.Environ()) and not in
// Env. The result is sorted by name.
func Environ(env map[string]string, passEnv []string, environ []string) []string {
	out := make(map[string]string, len(env)+len(passEnv))
	have := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			if _, dup := have[k]; !dup {
				have[k] = v
			}
		}
	}
	for _, k := range passEnv {
		if v, ok := have[k]; ok {
			out[k] = v
		}
	}
	for k, v := range env {
		out[k] = v
	}
	list := make([]string, 0, len(out))
	for k, v := range out {
		list = append(list, k+"="+v)
	}
	sort.Strings(list)
	return list
}

// Lookup finds the program to start. A command with a path separator is
// taken as it is (made absolute against dir when relative). A bare name is
// looked up in path, or, when path is empty, in the executor's own PATH with
// a warning. A program not found is an error naming the command.
func Lookup(command string, path []string, dir string) (program, warning string, err error) {
	if command == "" {
		return "", "", errors.New("tool server: no command")
	}
	if strings.ContainsRune(command, os.PathSeparator) {
		program = command
		if !filepath.IsAbs(program) && dir != "" {
			program = filepath.Join(dir, program)
		}
		if err := executable(program); err != nil {
			return "", "", fmt.Errorf("tool server command %q: %w", command, err)
		}
		return program, "", nil
	}
	if len(path) == 0 {
		p, err := exec.LookPath(command)
		if err != nil {
			return "", "", fmt.Errorf("tool server command %q not found in the executor's PATH", command)
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", "", fmt.Errorf("tool server command %q: %w", command, err)
		}
		return abs, fmt.Sprintf("tool server command %q was found through the executor's own PATH (%s), which the agent's client sets; name it by its path or set server.path", command, abs), nil
	}
	for _, folder := range path {
		p := filepath.Join(folder, command)
		if executable(p) == nil {
			return p, "", nil
		}
	}
	return "", "", fmt.Errorf("tool server command %q not found in server.path", command)
}

func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return errors.New("is a folder")
	}
	if fi.Mode()&0o111 == 0 {
		return errors.New("not executable")
	}
	return nil
}

// Start starts the server described by spec. When ctx ends the server is
// stopped as by Stop with no wait (like exec.CommandContext): pass the
// session's context, not a start-up timeout.
func Start(ctx context.Context, spec Spec) (*Process, error) {
	program, warning, err := Lookup(spec.Command, spec.Path, spec.Dir)
	if err != nil {
		return nil, err
	}
	cmd := &exec.Cmd{
		Path: program,
		Args: append([]string{spec.Command}, spec.Args...),
		Dir:  spec.Dir,
		Env:  Environ(spec.Env, spec.PassEnv, os.Environ()),
	}
	cmd.SysProcAttr = sysProcAttr()
	sp, err := newPipes()
	if err != nil {
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = sp.inR, sp.outW, sp.errW
	g, started, err := wrap(cmd)
	if err != nil {
		closeAll(sp.inR, sp.inW, sp.outR, sp.outW, sp.errR, sp.errW)
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		closeAll(sp.inR, sp.inW, sp.outR, sp.outW, sp.errR, sp.errW)
		if g != nil {
			g.abandon()
		}
		return nil, fmt.Errorf("starting tool server %q: %w", spec.Command, err)
	}
	closeAll(sp.inR, sp.outW, sp.errW)
	pid := cmd.Process.Pid
	if g != nil {
		if pid, err = started(); err != nil {
			g.end()
			_ = cmd.Wait() // reaps the guard, which exits once its lifeline ends; the start error is the one to report
			closeAll(sp.inW, sp.outR, sp.errR)
			return nil, fmt.Errorf("starting tool server %q: %w", spec.Command, err)
		}
	}
	p := newProcess(ctx, spec, cmd, g, pid, program, warning, sp)
	return p, nil
}

// serverPipes are a tool server's stdin, stdout and stderr pipes: the server's ends (inR, outW, errW)
// and the executor's.
type serverPipes struct{ inR, inW, outR, outW, errR, errW *os.File }

func newPipes() (*serverPipes, error) {
	var sp serverPipes
	var err error
	if sp.inR, sp.inW, err = os.Pipe(); err != nil {
		return nil, fmt.Errorf("tool server pipes: %w", err)
	}
	if sp.outR, sp.outW, err = os.Pipe(); err != nil {
		closeAll(sp.inR, sp.inW)
		return nil, fmt.Errorf("tool server pipes: %w", err)
	}
	if sp.errR, sp.errW, err = os.Pipe(); err != nil {
		closeAll(sp.inR, sp.inW, sp.outR, sp.outW)
		return nil, fmt.Errorf("tool server pipes: %w", err)
	}
	return &sp, nil
}

// newProcess is the Process of a started server (pid, under guard g when there is one): it copies the
// server's stderr, notes its exit, and kills it when ctx ends.
func newProcess(ctx context.Context, spec Spec, cmd *exec.Cmd, g *guarded, pid int, program, warning string, sp *serverPipes) *Process {
	errR := sp.errR
	p := &Process{
		Stdin:    sp.inW,
		Stdout:   sp.outR,
		Path:     program,
		cmd:      cmd,
		guard:    g,
		pgid:     pid,
		termWait: spec.TermWait,
		wait:     spec.ShutdownWait,
		done:     make(chan struct{}),
		stderrCh: make(chan struct{}),
		stderrR:  errR,
	}
	if p.termWait <= 0 {
		p.termWait = DefaultTermWait
	}
	if warning != "" {
		p.Warnings = append(p.Warnings, warning)
	}
	go func() {
		defer close(p.stderrCh)
		copyStderr(spec.Stderr, errR)
	}()
	go func() {
		err := cmd.Wait()
		p.code, p.waitErr = exitCode(cmd.ProcessState, err)
		if g != nil {
			g.end() // the guard is gone; its lifeline need not stay open
		}
		close(p.done)
	}()
	if ctx.Done() != nil {
		go func() {
			select {
			case <-ctx.Done():
				p.kill()
			case <-p.done:
			}
		}()
	}
	return p
}

// closeAll closes pipe ends. Closing one only ends the other end's reading or writing: nothing written
// to a file is lost, so an error here has nothing to say.
func closeAll(files ...*os.File) {
	for _, f := range files {
		_ = f.Close()
	}
}

func exitCode(st *os.ProcessState, err error) (int, error) {
	if st == nil {
		return -1, err
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return st.ExitCode(), nil
	}
	return st.ExitCode(), err
}

// Pid is the server's process id (and its process group id).
func (p *Process) Pid() int { return p.pgid }

// Done is closed when the server has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait waits for the server to exit and gives its exit code: the code it
// exited with, or 128+N when signal N ended it. err is set only when the
// exit could not be read.
func (p *Process) Wait() (int, error) {
	<-p.done
	return p.code, p.waitErr
}

// Stop ends the server: it closes stdin, waits up to ShutdownWait for the
// server to exit, then sends SIGTERM to its process group, waits up to
// TermWait, and sends SIGKILL. Whatever is left of the group (grandchildren)
// is killed once the server has exited. When ctx ends first the waits are
// cut short and the group is killed. Stop returns when the server has exited;
// it is safe to call more than once.
func (p *Process) Stop(ctx context.Context) error {
	p.stopOnce.Do(func() { p.stopErr = p.stop(ctx) })
	return p.stopErr
}

func (p *Process) stop(ctx context.Context) error {
	_ = p.Stdin.Close() // the end of its input asks the server to exit; Close may have closed it already
	if !p.waitFor(ctx, p.wait) {
		p.terminate()
		if !p.waitFor(ctx, p.termWait) {
			p.killTree()
		}
	}
	p.killTree()
	p.finishStderr()
	_, err := p.Wait()
	return err
}

// Close stops the server (as Stop, with ctx) and closes the executor's ends
// of its pipes. Call it once the server's output has been read to its end
// (or is no longer wanted): after Close nothing of the server holds an fd
// of the executor.
func (p *Process) Close(ctx context.Context) error {
	err := p.Stop(ctx)
	// The executor's pipe ends (Stop may have closed stdin already): closing one loses nothing written.
	_ = p.Stdin.Close()
	_ = p.Stdout.Close()
	_ = p.stderrR.Close()
	<-p.stderrCh
	return err
}

// kill ends the tree at once (context ended).
func (p *Process) kill() {
	p.killTree()
	p.finishStderr()
}

// guardWait is how long killTree waits for the guard to end the tree before
// it kills the guard itself.
const guardWait = 5 * time.Second

// terminate sends SIGTERM to the server's group (through the guard, which
// passes it on).
func (p *Process) terminate() {
	if p.guard != nil {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		return
	}
	p.signalGroup(syscall.SIGTERM)
}

// killTree kills the server's group and every descendant left and returns
// once the server has exited. With a guard, closing the lifeline does it; a
// guard that does not exit within guardWait is killed.
func (p *Process) killTree() {
	if p.guard == nil {
		p.signalGroup(syscall.SIGKILL)
		<-p.done
		p.signalGroup(syscall.SIGKILL) // grandchildren left in the group
		return
	}
	p.guard.end()
	t := time.NewTimer(guardWait)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		p.signalGroup(syscall.SIGKILL)
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// waitFor waits up to d for the exit; false when the server still runs.
func (p *Process) waitFor(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		select {
		case <-p.done:
			return true
		default:
			return false
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.done:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		select {
		case <-p.done:
			return true
		default:
			return false
		}
	}
}

func (p *Process) signalGroup(sig syscall.Signal) {
	_ = syscall.Kill(-p.pgid, sig) // ESRCH: the group is gone
}

// finishStderr waits briefly for the stderr copy to reach EOF, then closes
// the read end so that a descendant that escaped the group cannot hold the
// copier forever.
func (p *Process) finishStderr() {
	t := time.NewTimer(500 * time.Millisecond)
	defer t.Stop()
	select {
	case <-p.stderrCh:
	case <-t.C:
		_ = p.stderrR.Close() // a read end: ends the copy
		<-p.stderrCh
	}
}

// copyStderr copies r to w line by line with StderrPrefix, each line cut at
// MaxStderrLine bytes. Write errors stop the copy to w but r is still read.
// A StderrLog reads r as it comes (it cuts and bounds lines itself) and is
// closed at the end.
func copyStderr(w io.Writer, r io.Reader) {
	if sl, ok := w.(*StderrLog); ok {
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			_, _ = sl.Write(buf[:n]) // never fails
			if err != nil {
				_ = sl.Close() // never fails
				return
			}
		}
	}
	br := bufio.NewReaderSize(r, 4096)
	line := make([]byte, 0, 256)
	cut := false
	flush := func() {
		if w != nil {
			out := append([]byte(StderrPrefix), line...)
			if cut {
				out = append(out, CutMark...)
			}
			out = append(out, '\n')
			if _, err := w.Write(out); err != nil {
				w = nil
			}
		}
		line, cut = line[:0], false
	}
	for {
		chunk, err := br.ReadSlice('\n')
		data := chunk
		if err == nil {
			data = chunk[:len(chunk)-1]
		}
		if room := MaxStderrLine - len(line); len(data) > room {
			data, cut = data[:room], true
		}
		line = append(line, data...)
		if err == nil {
			flush()
			continue
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if len(line) > 0 || cut {
			flush()
		}
		return
	}
}
