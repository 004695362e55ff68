package sidecar_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/internal/syncbuf"
	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/sidecar"
)

// harness is one executor started for a test, with the test server behind
// it, reached over real pipes.
type harness struct {
	t      testing.TB
	env    *devsetup.Env
	record string // the server's record of every line it read
	in     io.WriteCloser
	out    *bufio.Reader
	done   chan int // the executor's exit code
	stderr *syncbuf.Buffer
	pid    int // the executor's process; 0 when the session runs in this process
}

// testPassEnv is the PassEnv of the test servers: devsetup's PATH and HOME,
// and GORACE, so that it reaches the server and the guard (see quietRaceExit).
var testPassEnv = []string{"PATH", "HOME", "GORACE"}

// serverOpts fills the command of a test server of the given kind.
func serverOpts(t testing.TB, kind string, o devsetup.Options) (devsetup.Options, string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	o.Dir = t.TempDir()
	record := filepath.Join(o.Dir, "server-record.jsonl")
	o.Command = self
	if o.PassEnv == nil {
		o.PassEnv = testPassEnv
	}
	o.Env = map[string]map[string]any{
		testServerEnv: {"value": kind},
		recordEnv:     {"value": record},
	}
	return o, record
}

// startWith builds a working folder for o with the test server of kind and
// starts the executor on it.
func startWith(t testing.TB, kind string, o devsetup.Options) *harness {
	t.Helper()
	o, record := serverOpts(t, kind, o)
	env, err := devsetup.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	h := launch(t, env)
	h.record = record
	return h
}

// launch starts the executor on a built working folder.
func launch(t testing.TB, env *devsetup.Env) *harness {
	t.Helper()
	return launchArgs(t, env)
}

// launchArgs starts the executor with further stdio flags.
func launchArgs(t testing.TB, env *devsetup.Env, extra ...string) *harness {
	t.Helper()
	h := &harness{t: t, env: env, done: make(chan int, 1), stderr: &syncbuf.Buffer{}}
	if executorBin != "" {
		cmd := exec.Command(executorBin, append([]string{"stdio", "--config", env.SettingsPath}, extra...)...)
		cmd.Stderr = h.stderr
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		h.pid = cmd.Process.Pid
		h.in, h.out = in, bufio.NewReader(out)
		go func() {
			err := cmd.Wait()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			}
			h.done <- code
		}()
	} else {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		h.in, h.out = inW, bufio.NewReader(outR)
		go func() {
			err := runInProcess(env, inR, outW, h.stderr, slices.Contains(extra, "--approve-session"))
			outW.Close()
			inR.Close()
			code := 0
			if c, ok := sidecar.IsExit(err); ok {
				code = c
			} else if err != nil {
				_, _ = h.stderr.Write([]byte("run: " + err.Error() + "\n")) // an in-memory buffer: a write cannot fail
				code = 1
			}
			h.done <- code
		}()
	}
	t.Cleanup(func() {
		h.in.Close()
		select {
		case <-h.done:
		case <-time.After(20 * time.Second):
			t.Errorf("the executor did not end; its stderr:\n%s", h.stderr.String())
		}
		if t.Failed() {
			t.Logf("executor stderr:\n%s", h.stderr.String())
		}
	})
	return h
}

// runInProcess runs one session of the executor in this process, as the
// stdio command does (sidecar/front.RunStdio, which the engine's tests do
// not import: the front is above the engine).
func runInProcess(env *devsetup.Env, in io.Reader, out io.Writer, stderr *syncbuf.Buffer, approveSession bool) error {
	e, err := sidecar.Open(context.Background(), sidecar.OpenOptions{ConfigPath: env.SettingsPath,
		Logger: slog.New(slog.NewJSONHandler(stderr, nil)), ApproveSession: approveSession})
	if err != nil {
		return err
	}
	err = e.Serve(context.Background(), in, out, stderr)
	if why := e.StopReason(); why != "" {
		err = fmt.Errorf("%w: %s", sidecar.ErrStopped, why)
	}
	return errors.Join(err, e.Close())
}

// client connects a go-sdk client to the executor.
func (h *harness) client(ctx context.Context) *mcp.ClientSession {
	h.t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: io.NopCloser(h.out), Writer: h.in}, nil)
	if err != nil {
		h.t.Fatalf("connecting: %v; executor stderr:\n%s", err, h.stderr.String())
	}
	return cs
}

// send writes one raw line to the executor.
func (h *harness) send(line string) {
	h.t.Helper()
	if _, err := io.WriteString(h.in, line+"\n"); err != nil {
		h.t.Fatal(err)
	}
}

// recv reads one raw line from the executor.
func (h *harness) recv() string {
	h.t.Helper()
	type res struct {
		s   string
		err error
	}
	ch := make(chan res, 1)
	go func() {
		s, err := h.out.ReadString('\n')
		ch <- res{s, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			h.t.Fatalf("reading from the executor: %v; stderr:\n%s", r.err, h.stderr.String())
		}
		return r.s[:len(r.s)-1]
	case <-time.After(20 * time.Second):
		h.t.Fatalf("no line from the executor; stderr:\n%s", h.stderr.String())
	}
	return ""
}

// stop closes the executor's input and waits for its exit code.
func (h *harness) stop() int {
	h.in.Close()
	return h.exitCode()
}

func (h *harness) exitCode() int {
	select {
	case c := <-h.done:
		h.done <- c
		return c
	case <-time.After(20 * time.Second):
		h.t.Fatalf("the executor did not end; stderr:\n%s", h.stderr.String())
	}
	return -1
}

// checkBook checks the book with receipts/book and returns the result.
func (h *harness) checkBook() book.Result {
	h.t.Helper()
	text, err := os.ReadFile(h.env.BookPath)
	if err != nil {
		h.t.Fatal(err)
	}
	res := book.CheckBook(text, book.Options{IssuerKeys: []string{h.env.Thumbprint}})
	if !res.Summary.Intact {
		h.t.Errorf("the book is not intact: %+v", res.Problems)
		for _, e := range res.Entries {
			if len(e.Problems) > 0 || len(e.Breaches) > 0 {
				h.t.Errorf("entry %d (%s): problems %+v breaches %+v", e.Index, e.Kind, e.Problems, e.Breaches)
			}
		}
	}
	return res
}
