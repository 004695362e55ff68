package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/internal/syncbuf"
	"github.com/seed-6e06167c/mcp-executor/sidecar/page"
)

// waitLimit bounds every wait of these tests (each poll loop has it as its
// deadline).
const waitLimit = 30 * time.Second

// folder is the executor's working folder: development keys, settings
// with the supplies tools and the tool server, and no slip yet (the
// person signs it in the page).
type folder struct {
	env    *devsetup.Env
	record string // the tool server's record of every line it read
	queue  string // the queue folder the page and the executor share
}

func newFolder(t *testing.T) *folder {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	f := &folder{record: filepath.Join(dir, "server-record.jsonl"), queue: filepath.Join(dir, "approvals")}
	f.env, err = devsetup.Build(devsetup.Options{Dir: dir, Command: self, Name: "Supplies executor",
		Env: map[string]map[string]any{serverEnv: {"value": "sdk"}, recordEnv: {"value": f.record}},
		Tools: map[string]devsetup.Tool{
			"order": {Action: "supplies.order", Amount: map[string]any{"unit": "GBP", "pointer": "/total"}},
			"list":  {Action: "supplies.list"},
		},
		Settings: map[string]any{"approvals": map[string]any{"queue": "approvals", "timeout": 60000}}})
	if err != nil {
		t.Fatal(err)
	}
	// The development slip and its passkey are not the person's: the page
	// writes the slip, and the settings trust the page's passkey only.
	if err := os.Remove(f.env.SlipPath); err != nil {
		t.Fatal(err)
	}
	f.trust(t, nil)
	return f
}

// trust writes agent.issuerKeys into the settings, as the person does
// with the thumbprint the page shows.
func (f *folder) trust(t *testing.T, thumbprints []string) {
	t.Helper()
	data, err := os.ReadFile(f.env.SettingsPath)
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	agent := s["agent"].(map[string]any)
	if thumbprints == nil {
		delete(agent, "issuerKeys")
	} else {
		agent["issuerKeys"] = thumbprints
	}
	out, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	tmp := f.env.SettingsPath + ".tmp"
	if err := os.WriteFile(tmp, out, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, f.env.SettingsPath); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond until it holds, for at most waitLimit.
func waitFor(t *testing.T, what string, cond func() bool, logs ...*syncbuf.Buffer) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			for _, l := range logs {
				t.Logf("stderr:\n%s", l.String())
			}
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitPrepared waits for a prepared approval in the queue other than
// those of the requests in seen, and returns it.
func (f *folder) waitPrepared(t *testing.T, logs *syncbuf.Buffer, seen ...string) page.Prepared {
	t.Helper()
	var got page.Prepared
	waitFor(t, "a new prepared approval in the queue", func() bool {
		names, _ := filepath.Glob(filepath.Join(f.queue, "*"+page.PreparedSuffix))
		sort.Strings(names)
	next:
		for _, name := range names {
			data, err := os.ReadFile(name)
			if err != nil {
				continue // removed meanwhile
			}
			var p page.Prepared
			if err := json.Unmarshal(data, &p); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for _, s := range seen {
				if p.Request == s {
					continue next
				}
			}
			got = p
			return true
		}
		return false
	}, logs)
	return got
}

// pageProcess is a running `mcp-executor page`.
type pageProcess struct {
	origin string // as it says it on stderr
	code   string // the registration code it printed, "" when none
	stderr *syncbuf.Buffer
	stop   func() // SIGTERM, and wait for it to end (once; the test's end does it too)
}

// The lines `mcp-executor page` writes on stderr for the person.
var (
	saysOrigin = regexp.MustCompile(`open (http://localhost:[0-9]+) in the browser`)
	saysCode   = regexp.MustCompile(`registration code ([A-Z2-7]{4}(?:-[A-Z2-7]{4}){7})\n`)
)

// startPage starts `mcp-executor page` with args added, on a free loopback
// port unless they say --listen, and reads its origin and registration code from its stderr. It is
// stopped with SIGTERM at the end of the test, if not before.
func startPage(t *testing.T, config string, args ...string) *pageProcess {
	t.Helper()
	if !slices.Contains(args, "--listen") {
		args = append(args, "--listen", "127.0.0.1:0")
	}
	cmd := exec.Command(executorBin, append([]string{"page", "--config", config}, args...)...)
	p := &pageProcess{stderr: &syncbuf.Buffer{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(done) }()
	var once sync.Once
	p.stop = func() {
		once.Do(func() {
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Errorf("stopping the page: %v", err)
			}
			select {
			case <-done:
				if err := waitErr; err != nil {
					t.Errorf("the page after SIGTERM: %v; stderr:\n%s", err, p.stderr.String())
				}
			case <-time.After(waitLimit):
				t.Errorf("the page did not stop; stderr:\n%s", p.stderr.String())
				_ = cmd.Process.Kill() // it did not end on SIGTERM
			}
		})
	}
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("page stderr:\n%s", p.stderr.String())
		}
	})
	waitFor(t, "the page to say its origin", func() bool {
		select {
		case <-done:
			t.Fatalf("the page ended: %v; stderr:\n%s", waitErr, p.stderr.String())
		default:
		}
		if m := saysOrigin.FindStringSubmatch(p.stderr.String()); m != nil {
			p.origin = m[1]
		}
		return p.origin != ""
	}, p.stderr)
	// The code is printed before the origin.
	if m := saysCode.FindStringSubmatch(p.stderr.String()); m != nil {
		p.code = m[1]
	}
	return p
}

// executor is `mcp-executor stdio` with a go-sdk client over its pipes.
type executor struct {
	cs     *mcp.ClientSession
	stdin  io.WriteCloser
	stderr *syncbuf.Buffer
	done   chan int // the exit code
}

func startExecutor(t *testing.T, ctx context.Context, config string) *executor {
	t.Helper()
	cmd := exec.Command(executorBin, "stdio", "--config", config)
	e := &executor{stderr: &syncbuf.Buffer{}, done: make(chan int, 1)}
	cmd.Stderr = e.stderr
	var err error
	if e.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := cmd.Wait()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			code = -1
		}
		e.done <- code
	}()
	t.Cleanup(func() {
		e.stdin.Close()
		// After a failure, calls may still be held for the passkey (the
		// executor waits for them): do not wait as long.
		wait := waitLimit
		if t.Failed() {
			wait = 5 * time.Second
		}
		select {
		case c := <-e.done:
			e.done <- c
		case <-time.After(wait):
			t.Errorf("the executor did not end; stderr:\n%s", e.stderr.String())
			_ = cmd.Process.Kill() // it did not end when its input closed
		}
		if t.Failed() {
			t.Logf("executor stderr:\n%s", e.stderr.String())
		}
	})
	c := mcp.NewClient(&mcp.Implementation{Name: "supplies-agent", Version: "1"}, nil)
	e.cs, err = c.Connect(ctx, &mcp.IOTransport{Reader: io.NopCloser(bufio.NewReader(stdout)), Writer: e.stdin}, nil)
	if err != nil {
		t.Fatalf("connecting to the executor: %v; stderr:\n%s", err, e.stderr.String())
	}
	return e
}

// call is a tools/call made in the background.
type call chan callResult

type callResult struct {
	res *mcp.CallToolResult
	err error
}

func (e *executor) callAsync(ctx context.Context, tool string, args map[string]any) call {
	ch := make(call, 1)
	go func() {
		res, err := e.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		ch <- callResult{res, err}
	}()
	return ch
}

func (e *executor) await(t *testing.T, c call) *mcp.CallToolResult {
	t.Helper()
	select {
	case r := <-c:
		if r.err != nil {
			t.Fatalf("the call: %v; stderr:\n%s", r.err, e.stderr.String())
		}
		return r.res
	case <-time.After(waitLimit):
		t.Fatalf("no answer to the call; stderr:\n%s", e.stderr.String())
	}
	return nil
}

// stop ends the session and returns the executor's exit code.
func (e *executor) stop(t *testing.T) int {
	t.Helper()
	if err := e.cs.Close(); err != nil {
		t.Logf("closing the client session: %v", err)
	}
	e.stdin.Close()
	select {
	case c := <-e.done:
		e.done <- c
		return c
	case <-time.After(waitLimit):
		t.Fatalf("the executor did not end; stderr:\n%s", e.stderr.String())
	}
	return -1
}

// run runs the binary with args and returns its exit code and output.
func run(t *testing.T, args ...string) (int, string) {
	t.Helper()
	out, err := exec.Command(executorBin, args...).CombinedOutput()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode(), string(out)
	case err != nil:
		t.Fatalf("running %v: %v", args, err)
	}
	return 0, string(out)
}

// receivedCalls are the tools/call requests the tool server read: tool
// name and arguments.
func receivedCalls(t *testing.T, record string) []string {
	t.Helper()
	data, err := os.ReadFile(record)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var m struct {
			Method string `json:"method"`
			Params struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.Method == "tools/call" {
			out = append(out, m.Params.Name+" "+string(m.Params.Arguments))
		}
	}
	return out
}
