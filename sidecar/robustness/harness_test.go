package robustness_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/internal/peakrss"
)

// Tools every working folder's settings name. The hostile server's tools
// are all reads; order reads its amount at /total; notinslip's action is
// not in the slip, so the check before acting refuses it.
const (
	actionRead   = "provared.data.read"
	actionOrder  = "supplies.order"
	actionDenied = "example.not-allowed"
)

var readTools = []string{"echo", "slow", "silent", "exit", "huge", "twice", "flood", "bignum", "dupmember",
	"surrogate", "badutf8", "nonobject", "dupid", "garbage", "rpcerror"}

// newEnv builds a working folder whose tool server is this test binary as
// the server of the given kind; it returns the folder and the server's
// record file. settings are extra members of the settings file.
func newEnv(t testing.TB, kind string, settings map[string]any) (*devsetup.Env, string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	record := filepath.Join(dir, "server-record.jsonl")
	tools := map[string]devsetup.Tool{
		"order":     {Action: actionOrder, Amount: map[string]any{"unit": "GBP", "pointer": "/total"}},
		"notinslip": {Action: actionDenied},
	}
	for _, n := range readTools {
		tools[n] = devsetup.Tool{Action: actionRead}
	}
	env, err := devsetup.Build(devsetup.Options{
		Dir:     dir,
		Command: self,
		Env: map[string]map[string]any{
			serverKindEnv: {"value": kind},
			recordEnv:     {"value": record},
			// Under -race the server (this test binary) would sleep a second
			// at every exit, waiting for race reports; it has none to wait for.
			"GORACE": {"value": "atexit_sleep_ms=0"},
		},
		Tools:    tools,
		Actions:  []string{actionRead, actionOrder},
		Settings: settings,
	})
	if err != nil {
		t.Fatal(err)
	}
	return env, record
}

// boundedBuffer keeps the first headLimit bytes written to it and about
// the last tailLimit, and counts the rest, so that a flood on the
// executor's stderr cannot grow the test.
type boundedBuffer struct {
	mu    sync.Mutex
	head  []byte
	tail  []byte
	total int64
}

const headLimit, tailLimit = 256 << 10, 768 << 10

func (l *boundedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total += int64(len(p))
	q := p
	if room := headLimit - len(l.head); room > 0 {
		if len(q) < room {
			room = len(q)
		}
		l.head = append(l.head, q[:room]...)
		q = q[room:]
	}
	l.tail = append(l.tail, q...)
	if len(l.tail) > 2*tailLimit {
		l.tail = append(l.tail[:0:0], l.tail[len(l.tail)-tailLimit:]...)
	}
	return len(p), nil
}

// String is the head and the tail kept, "…" between them when bytes were
// left out.
func (l *boundedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if int64(len(l.head)+len(l.tail)) < l.total {
		return string(l.head) + "\n…\n" + string(l.tail)
	}
	return string(l.head) + string(l.tail)
}

func (l *boundedBuffer) Total() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total
}

// executor is one run of the binary on a working folder, reached over real
// pipes by raw JSON-RPC lines.
type executor struct {
	t      testing.TB
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *boundedBuffer
	lines  chan lineOrErr
	done   chan struct{}
	code   int   // exit code, or -1 when a signal ended it
	sig    int   // the signal that ended it, 0 for none
	maxRSS int64 // peak resident set in KiB (rusage), after it exited
	hwm    int64 // peak resident set in KiB (VmHWM), last sampled while running
}

type lineOrErr struct {
	line []byte
	err  error
}

// start runs bin (executorBin or faultBin) with `stdio --config` on env,
// with extra environment variables (NAME=value).
func start(t testing.TB, bin string, env *devsetup.Env, extra ...string) *executor {
	t.Helper()
	x := &executor{t: t, stderr: &boundedBuffer{}, lines: make(chan lineOrErr, 64), done: make(chan struct{})}
	x.cmd = exec.Command(bin, "stdio", "--config", env.SettingsPath)
	x.cmd.Env = append(os.Environ(), extra...)
	x.cmd.Stderr = x.stderr
	var err error
	if x.in, err = x.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := x.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	x.out = bufio.NewReaderSize(out, 1<<20)
	if err := x.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		defer close(x.lines)
		for {
			line, err := x.out.ReadBytes('\n')
			if err != nil {
				x.lines <- lineOrErr{err: err}
				return
			}
			x.lines <- lineOrErr{line: line[:len(line)-1]}
		}
	}()
	go func() {
		<-readDone // stdout is read to its end before Wait closes it
		err := x.cmd.Wait()
		x.code = 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			x.code = ee.ExitCode()
		}
		if st := x.cmd.ProcessState; st != nil {
			if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				x.sig = int(ws.Signal())
			}
			if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
				x.maxRSS = ru.Maxrss
			}
		}
		close(x.done)
	}()
	t.Cleanup(func() {
		x.in.Close()
		select {
		case <-x.done:
		case <-time.After(30 * time.Second):
			x.cmd.Process.Kill()
			<-x.done
			t.Errorf("the executor did not end after its input closed")
		}
		if t.Failed() {
			t.Logf("executor stderr (its own lines, the server's left out):\n%s", x.ownStderr())
		}
	})
	return x
}

// ownStderr is the executor's own stderr lines, without the server's
// ("[server] …") and at most 64 of them, for a failing test's log.
func (x *executor) ownStderr() string {
	var out []string
	for _, l := range strings.Split(x.stderr.String(), "\n") {
		if !strings.HasPrefix(l, "[server] ") && l != "" {
			out = append(out, l)
		}
	}
	if len(out) > 64 {
		out = out[len(out)-64:]
	}
	return strings.Join(out, "\n")
}

// send writes one line (an LF is added).
func (x *executor) send(line string) {
	x.t.Helper()
	if _, err := io.WriteString(x.in, line+"\n"); err != nil {
		x.t.Fatalf("writing to the executor: %v", err)
	}
}

// recv reads the next line from the executor.
func (x *executor) recv() []byte {
	x.t.Helper()
	select {
	case r, ok := <-x.lines:
		if !ok || r.err != nil {
			x.t.Fatalf("the executor's output ended (%v); stderr:\n%s", r.err, x.ownStderr())
		}
		return r.line
	case <-time.After(30 * time.Second):
		x.t.Fatalf("no line from the executor in 30s; stderr:\n%s", x.ownStderr())
	}
	return nil
}

// recvOrEnd reads the next line from the executor; ok is false when its
// output ended instead (the process is exiting).
func (x *executor) recvOrEnd() (line []byte, ok bool) {
	x.t.Helper()
	select {
	case r, open := <-x.lines:
		if !open || r.err != nil {
			return nil, false
		}
		return r.line, true
	case <-time.After(30 * time.Second):
		x.t.Fatalf("no line from the executor in 30s; stderr:\n%s", x.ownStderr())
	}
	return nil, false
}

// sync sends a ping and returns every line that came before its answer, so
// that a test can show the executor is up and answered nothing else.
func (x *executor) sync(tag string) [][]byte {
	x.t.Helper()
	id := `"sync-` + tag + `"`
	x.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
	var before [][]byte
	for {
		line := x.recv()
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(line, &m) == nil && string(m.ID) == id {
			return before
		}
		before = append(before, line)
	}
}

// recvFor reads lines until one whose top-level id is id (raw JSON), and
// returns it and the lines before it.
func (x *executor) recvFor(id string) ([]byte, [][]byte) {
	x.t.Helper()
	var before [][]byte
	for {
		line := x.recv()
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(line, &m) == nil && string(m.ID) == id {
			return line, before
		}
		if bytes.Contains(line, []byte(`"id":`+id)) { // a line that is not JSON but carries the id
			return line, before
		}
		before = append(before, line)
	}
}

// initializeLine is the client's initialize request.
const initializeLine = `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"robustness","version":"1"}}}`

// initialize runs the MCP handshake by raw lines.
func (x *executor) initialize() {
	x.t.Helper()
	x.send(initializeLine)
	if m := decode(x.t, x.recv()); m["result"] == nil {
		x.t.Fatalf("initialize answered %v", m)
	}
	x.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// sampleHWM reads the executor's peak resident set so far (VmHWM, KiB).
func (x *executor) sampleHWM() int64 {
	x.t.Helper()
	kb, err := peakrss.OfPID(x.cmd.Process.Pid)
	if err != nil {
		x.t.Fatalf("the executor's peak resident set: %v", err)
	}
	if kb > x.hwm {
		x.hwm = kb
	}
	return kb
}

// stop closes the executor's input and waits for it to exit.
func (x *executor) stop() int {
	x.t.Helper()
	x.in.Close()
	return x.wait()
}

// wait waits for the executor to exit on its own (at most 30s) and gives
// its exit code; the lines it still writes are dropped.
func (x *executor) wait() int {
	x.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case _, ok := <-x.lines:
			if ok {
				continue
			}
		case <-deadline:
			x.t.Fatalf("the executor did not exit in 30s; stderr:\n%s", x.ownStderr())
		}
		break
	}
	select {
	case <-x.done:
		return x.code
	case <-deadline:
		x.t.Fatalf("the executor did not exit in 30s; stderr:\n%s", x.ownStderr())
	}
	return -1
}

// callLine is a tools/call request line.
func callLine(id, tool, args string) string {
	if args == "" {
		args = "{}"
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
}

func decode(t testing.TB, line []byte) map[string]any {
	t.Helper()
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		t.Fatalf("the executor wrote a line that is not a JSON object (%v): %.300s", err, line)
	}
	return m
}

// rpcErr is a JSON-RPC error answer's id, code, message and data.
type rpcErr struct {
	ID      string
	Code    int
	Message string
	Data    map[string]any
}

// wantError decodes line as an error answer and checks its id (raw JSON)
// and code.
func wantError(t *testing.T, line []byte, id string, code int) rpcErr {
	t.Helper()
	var m struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code    int            `json:"code"`
			Message string         `json:"message"`
			Data    map[string]any `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(line, &m); err != nil || m.Error == nil {
		t.Fatalf("want error %d for id %s, got %.400s", code, id, line)
	}
	if string(m.ID) != id || m.Error.Code != code {
		t.Errorf("got error %d %q for id %s, want %d for id %s", m.Error.Code, m.Error.Message, m.ID, code, id)
	}
	return rpcErr{ID: string(m.ID), Code: m.Error.Code, Message: m.Error.Message, Data: m.Error.Data}
}

// toolResult decodes a tools/call result: its id, isError, _meta and text.
type toolResult struct {
	ID      string
	IsError bool
	Meta    map[string]any
	Text    string
}

func wantResult(t *testing.T, line []byte, id string) toolResult {
	t.Helper()
	var m struct {
		ID     json.RawMessage `json:"id"`
		Result *struct {
			IsError bool           `json:"isError"`
			Meta    map[string]any `json:"_meta"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(line, &m); err != nil || m.Result == nil {
		t.Fatalf("want a result for id %s, got %.400s", id, line)
	}
	if string(m.ID) != id {
		t.Errorf("result for id %s, want %s", m.ID, id)
	}
	r := toolResult{ID: string(m.ID), IsError: m.Result.IsError, Meta: m.Result.Meta}
	for _, c := range m.Result.Content {
		r.Text += c.Text
	}
	return r
}

// startFailure is the line in which `mcp-executor stdio` says why it
// stopped.
func startFailure(x *executor) string {
	for _, l := range strings.Split(x.stderr.String(), "\n") {
		if strings.HasPrefix(l, "mcp-executor stdio: ") {
			return l
		}
	}
	return ""
}

// testSeed is the seed of a randomized test: ROBUSTNESS_SEED when set (to
// replay a run), else the time; it is logged.
func testSeed(t *testing.T) uint64 {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("ROBUSTNESS_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("ROBUSTNESS_SEED: %v", err)
		}
	}
	t.Logf("ROBUSTNESS_SEED=%d", seed)
	return seed
}

// cli runs a subcommand of the normal binary and gives its exit code and
// its output (stdout, then stderr).
func cli(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(executorBin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running mcp-executor %v: %v", args, err)
	}
	return code, out.String() + errb.String()
}

// verifyBook runs `mcp-executor verify BOOK --trust T`.
func verifyBook(t *testing.T, env *devsetup.Env) (int, string) {
	t.Helper()
	return cli(t, "verify", env.BookPath, "--trust", env.Thumbprint)
}

// compare runs `mcp-executor compare --config F`.
func compare(t *testing.T, env *devsetup.Env) (int, string) {
	t.Helper()
	return cli(t, "compare", "--config", env.SettingsPath)
}
