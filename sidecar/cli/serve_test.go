package cli

import (
	"bufio"
	"context"
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
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/internal/syncbuf"
	"github.com/seed-6e06167c/mcp-executor/receipts/book"
)

// TestServeTwoBridgesAndDrain runs the real binary: `serve` on a Unix socket, two MCP clients that each
// start `mcp-executor bridge` as their server command and call tools at the same time, then SIGTERM
// while a slow call is at a tool server. Every call sent gets exactly one stub in the one book, the book
// checks intact, and serve exits 0 after writing the interrupted call's receipt.
func TestServeTwoBridgesAndDrain(t *testing.T) {
	exe := binary(t)
	dir := t.TempDir()
	env, err := devsetup.Build(devsetup.Options{
		Dir:     dir,
		Command: testServerCommand(t),
		Env:     map[string]map[string]any{testServerEnv: {"value": "1"}},
		Tools: map[string]devsetup.Tool{
			"echo": {Action: "provared.data.read"},
			"slow": {Action: "provared.data.read"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "executor.sock")
	serveCmd := exec.Command(exe, "serve", "--config", env.SettingsPath, "--listen", "unix:"+sock, "--drain", "20s",
		"--health", "127.0.0.1:0")
	serveLog := &syncbuf.Buffer{}
	serveCmd.Stderr = serveLog
	if err := serveCmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = serveCmd.Process.Kill() })
	waitFor(t, func() bool { _, err := os.Stat(sock); return err == nil }, "the socket to appear", serveLog)
	// /healthz and /readyz answer on their own TCP port once the executor is ready.
	health := healthAddress(t, serveLog)
	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get("http://" + health + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s = %d %s", path, resp.StatusCode, body)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	connect := func() *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: "bridge-test", Version: "1"}, nil)
		s, err := c.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(exe, "bridge", "--connect", "unix:"+sock)}, nil)
		if err != nil {
			t.Fatalf("connecting through the bridge: %v\nserve log:\n%s", err, serveLog)
		}
		return s
	}
	a, b := connect(), connect()
	const each = 5
	var wg sync.WaitGroup
	for _, s := range []*mcp.ClientSession{a, b} {
		wg.Add(1)
		go func(s *mcp.ClientSession) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": fmt.Sprint(i)}})
				if err != nil || res.IsError {
					t.Errorf("echo %d: %v %+v", i, err, res)
				}
			}
		}(s)
	}
	wg.Wait()

	// A slow call in flight when SIGTERM arrives.
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	slowDone := make(chan answer, 1)
	go func() {
		res, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 1500}})
		slowDone <- answer{res, err}
	}()
	waitFor(t, func() bool { return strings.Contains(readFile(t, env.CopyPath), `"tool":"slow"`) }, "the slow call to be sent", serveLog)
	if err := serveCmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- serveCmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("serve after SIGTERM: %v\n%s", err, serveLog)
		}
	case <-time.After(40 * time.Second):
		t.Fatalf("serve did not stop after SIGTERM\n%s", serveLog)
	}
	// The call in flight finished within the drain with the server's own result.
	slow := <-slowDone
	if slow.err != nil || slow.res.IsError || len(slow.res.Content) != 1 {
		t.Fatalf("the call in flight at SIGTERM: %v %+v\n%s", slow.err, slow.res, serveLog)
	}
	if tc, ok := slow.res.Content[0].(*mcp.TextContent); !ok || tc.Text != "slept" {
		t.Fatalf("the call in flight at SIGTERM got %+v, want the server's \"slept\"", slow.res.Content[0])
	}
	a.Close()
	b.Close()

	text, err := os.ReadFile(env.BookPath)
	if err != nil {
		t.Fatal(err)
	}
	res := book.CheckBook(text, book.Options{IssuerKeys: []string{env.Thumbprint}})
	if !res.Summary.Intact || !res.Summary.WithinSlips {
		t.Fatalf("book not intact/within slips: %+v\nproblems %+v", res.Summary, res.Problems)
	}
	if got, want := res.Summary.Counts.Stubs, 2*each+1; got != want {
		t.Fatalf("stubs in the book: %d, want %d (every call sent, the interrupted one included)", got, want)
	}
	if res.Summary.Counts.Countersigned != res.Summary.Counts.Stubs {
		t.Fatalf("every stub must be countersigned: %+v", res.Summary.Counts)
	}
	if !strings.Contains(serveLog.String(), "peer_uid") {
		t.Errorf("the peer's uid is not logged:\n%s", serveLog)
	}
}

// --- helpers shared by the command tests ---

const testServerEnv = "MCP_EXECUTOR_CLI_TEST_SERVER"

var (
	buildOnce sync.Once
	builtExe  string
	buildErr  error
)

// binary builds ./cmd/mcp-executor once per test run.
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mcp-executor-cli-test-*")
		if err != nil {
			buildErr = err
			return
		}
		builtExe = filepath.Join(dir, "mcp-executor")
		out, err := exec.Command("go", "build", "-o", builtExe, "../../cmd/mcp-executor").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtExe
}

// testServerCommand is this test binary, which runs as an MCP tool server when testServerEnv is set.
func testServerCommand(t *testing.T) string {
	t.Helper()
	p, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestMain(m *testing.M) {
	if os.Getenv(testServerEnv) == "1" {
		runTestToolServer()
		return
	}
	code := m.Run()
	if builtExe != "" {
		os.RemoveAll(filepath.Dir(builtExe))
	}
	os.Exit(code)
}

type echoArgs struct {
	Text string `json:"text"`
}
type slowArgs struct {
	MS int `json:"ms"`
}

// runTestToolServer is a go-sdk MCP server on stdin/stdout with an echo tool and a slow tool.
func runTestToolServer() {
	s := mcp.NewServer(&mcp.Implementation{Name: "cli-test-server", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "slow"}, func(ctx context.Context, _ *mcp.CallToolRequest, a slowArgs) (*mcp.CallToolResult, any, error) {
		select {
		case <-time.After(time.Duration(a.MS) * time.Millisecond):
		case <-ctx.Done():
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "slept"}}}, nil, nil
	})
	_ = s.Run(context.Background(), &mcp.StdioTransport{})
}

func waitFor(t *testing.T, cond func() bool, what string, log fmt.Stringer) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s\nlog:\n%s", what, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

// healthAddress reads the health endpoint's address from serve's JSON log.
func healthAddress(t *testing.T, log fmt.Stringer) string {
	t.Helper()
	var addr string
	waitFor(t, func() bool {
		sc := bufio.NewScanner(strings.NewReader(log.String()))
		for sc.Scan() {
			var entry struct{ Msg, Address string }
			if json.Unmarshal(sc.Bytes(), &entry) == nil && entry.Msg == "health endpoint" {
				addr = entry.Address
				return true
			}
		}
		return false
	}, "the health endpoint's address in the log", log)
	return addr
}

// startServe starts `serve` on a fresh working folder with the given extra flags and waits for its socket.
func startServe(t *testing.T, flags ...string) (cmd *exec.Cmd, sock string, env *devsetup.Env, log *syncbuf.Buffer) {
	t.Helper()
	exe := binary(t)
	dir := t.TempDir()
	env, err := devsetup.Build(devsetup.Options{
		Dir:     dir,
		Command: testServerCommand(t),
		Env:     map[string]map[string]any{testServerEnv: {"value": "1"}},
		Tools:   map[string]devsetup.Tool{"echo": {Action: "provared.data.read"}, "slow": {Action: "provared.data.read"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	sock = filepath.Join(dir, "executor.sock")
	cmd = exec.Command(exe, append([]string{"serve", "--config", env.SettingsPath, "--listen", "unix:" + sock}, flags...)...)
	log = &syncbuf.Buffer{}
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	waitFor(t, func() bool { _, err := os.Stat(sock); return err == nil }, "the socket to appear", log)
	return cmd, sock, env, log
}

// rawSession is a client on the socket that writes and reads JSON-RPC lines by hand.
type rawSession struct {
	t    *testing.T
	conn net.Conn
	r    *bufio.Reader
}

func dialRaw(t *testing.T, sock string) *rawSession {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawSession{t: t, conn: c, r: bufio.NewReader(c)}
}

func (s *rawSession) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.conn, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
}

func (s *rawSession) recv() (string, error) {
	_ = s.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	line, err := s.r.ReadString('\n')
	return strings.TrimSuffix(line, "\n"), err
}

func (s *rawSession) initialize() {
	s.t.Helper()
	s.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if line, err := s.recv(); err != nil || !strings.Contains(line, `"result"`) {
		s.t.Fatalf("initialize: %q %v", line, err)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// waitExit waits for serve to exit after SIGTERM; a serve still running after a minute fails the test.
func waitExit(t *testing.T, cmd *exec.Cmd, log fmt.Stringer) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("serve after SIGTERM: %v\n%s", err, log)
		}
	case <-time.After(time.Minute):
		t.Fatalf("serve did not stop after SIGTERM\n%s", log)
	}
}

// The session cap holds: with --max-sessions 1 a second client gets a clear JSON-RPC error and its
// connection closed, and serve logs the refusal; the first session goes on working.
func TestServeSessionCap(t *testing.T) {
	cmd, sock, _, log := startServe(t, "--max-sessions", "1")
	a := dialRaw(t, sock)
	a.initialize()
	b := dialRaw(t, sock)
	line, err := b.recv()
	if err != nil || !strings.Contains(line, `"code":1001`) || !strings.Contains(line, "--max-sessions") || !strings.Contains(line, `"id":null`) {
		t.Fatalf("the refused client got %q %v", line, err)
	}
	if _, err := b.recv(); !errors.Is(err, io.EOF) {
		t.Fatalf("the refused client's connection must be closed: %v", err)
	}
	a.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"still here"}}}`)
	if line, err := a.recv(); err != nil || !strings.Contains(line, "still here") {
		t.Fatalf("the first session after the refusal: %q %v", line, err)
	}
	waitFor(t, func() bool { return strings.Contains(log.String(), "session refused") }, "the refusal in the log", log)
	waitExit(t, cmd, log)
}

// A client that stops reading cannot hold serve past the drain: its answers fill the socket, SIGTERM
// comes, and serve exits once the drain budget is spent although the client never reads again. The
// calls it sent still have their stubs.
func TestServeClientNotReadingCannotHoldDrain(t *testing.T) {
	cmd, sock, env, log := startServe(t, "--drain", "1s", "--write-timeout", "1h")
	a := dialRaw(t, sock)
	a.initialize()
	const calls = 12
	big := strings.Repeat("x", 256<<10) // 12 answers of 256 KiB: far more than the socket holds
	for i := range calls {
		a.send(`{"jsonrpc":"2.0","id":` + fmt.Sprint(i+1) + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + big + `"}}}`)
	}
	// Every stub is durable before its answer is written, so the book fills
	// while the client reads nothing; the copy's receipt line of a call
	// follows its answer, so the drain, which cuts the blocked writes, lets
	// the last of them be written before the executor exits.
	waitFor(t, func() bool { return strings.Count(readFile(t, env.BookPath), "\n") >= 1+calls }, "every call's stub", log)
	waitExit(t, cmd, log)
	if n := strings.Count(readFile(t, env.CopyPath), `"kind":"receipt"`); n != calls {
		t.Errorf("the copy holds %d receipt lines after the drain, want one for each of %d calls", n, calls)
	}
	text, err := os.ReadFile(env.BookPath)
	if err != nil {
		t.Fatal(err)
	}
	res := book.CheckBook(text, book.Options{IssuerKeys: []string{env.Thumbprint}})
	if !res.Summary.Intact || res.Summary.Counts.Stubs != calls {
		t.Fatalf("book after the drain: %+v", res.Summary)
	}
}
