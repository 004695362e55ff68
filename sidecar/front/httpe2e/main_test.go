package httpe2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
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
)

// toolServerEnv makes this test binary run as an MCP tool server.
const toolServerEnv = "MCP_EXECUTOR_HTTPE2E_TOOL_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(toolServerEnv) == "1" {
		runToolServer()
		return
	}
	code := m.Run()
	if builtExe != "" {
		_ = os.RemoveAll(filepath.Dir(builtExe))
	}
	os.Exit(code)
}

type textArgs struct {
	Text string `json:"text"`
}

type slowArgs struct {
	MS int `json:"ms"`
}

// runToolServer is a go-sdk MCP server on stdin and stdout: echo, slow (waits ms or until cancelled)
// and secret (a tool the tests hold for approval or leave unlisted).
func runToolServer() {
	s := mcp.NewServer(&mcp.Implementation{Name: "httpe2e-server", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, a textArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "held"}, func(_ context.Context, _ *mcp.CallToolRequest, a textArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "held call ran: " + a.Text}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "forbidden"}, func(_ context.Context, _ *mcp.CallToolRequest, _ textArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "the forbidden tool ran"}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "slow"}, func(ctx context.Context, _ *mcp.CallToolRequest, a slowArgs) (*mcp.CallToolResult, any, error) {
		select {
		case <-time.After(time.Duration(a.MS) * time.Millisecond):
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "slept"}}}, nil, nil
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	})
	_ = s.Run(context.Background(), &mcp.StdioTransport{})
}

var (
	buildOnce sync.Once
	builtExe  string
	buildErr  error
)

// binary builds ./cmd/mcp-executor once per test run.
func binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mcp-executor-httpe2e-*")
		if err != nil {
			buildErr = err
			return
		}
		builtExe = filepath.Join(dir, "mcp-executor")
		out, err := exec.Command("go", "build", "-o", builtExe, "../../../cmd/mcp-executor").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtExe
}

// testTools are the rules of the tests' own tool server: echo and slow allowed, held held for
// approval, forbidden not listed (refused).
var testTools = map[string]devsetup.Tool{
	"echo": {Action: "provared.data.read"},
	"slow": {Action: "provared.data.read"},
	"held": {Action: "provared.data.read", Approve: true},
}

// testEnv is a working folder whose tool server is this test binary.
func testEnv(t *testing.T, settings map[string]any) *devsetup.Env {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if settings == nil {
		settings = map[string]any{}
	}
	env, err := devsetup.Build(devsetup.Options{Dir: t.TempDir(), Command: self,
		Env: map[string]map[string]any{toolServerEnv: {"value": "1"}}, Tools: testTools, Settings: settings})
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// served is a running `serve --listen http://127.0.0.1:0/mcp`.
type served struct {
	t   *testing.T
	cmd *exec.Cmd
	url string
	log *syncbuf.Buffer
	env *devsetup.Env
}

// serveHTTP starts serve on an HTTP endpoint of a free loopback port with the given extra flags and
// waits for its URL in the log.
func serveHTTP(t *testing.T, env *devsetup.Env, flags ...string) *served {
	t.Helper()
	args := append([]string{"serve", "--config", env.SettingsPath, "--listen", "http://127.0.0.1:0/mcp"}, flags...)
	cmd := exec.Command(binary(t), args...)
	log := &syncbuf.Buffer{}
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &served{t: t, cmd: cmd, log: log, env: env}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait() // killed: its exit is not the test's
		if t.Failed() {
			t.Logf("serve's log:\n%s", cut(log.String(), 20000))
		}
	})
	s.url = serveURL(t, log)
	return s
}

// serveURL waits for serve's log to say where its HTTP endpoint listens.
func serveURL(t testing.TB, log fmt.Stringer) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		sc := bufio.NewScanner(strings.NewReader(log.String()))
		for sc.Scan() {
			var entry struct{ Msg, HTTP string }
			if json.Unmarshal(sc.Bytes(), &entry) == nil && entry.Msg == "listening" && entry.HTTP != "" {
				return entry.HTTP
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not say where it listens\n%s", log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop sends SIGTERM and waits for serve to exit 0.
func (s *served) stop() {
	s.t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		s.t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- s.cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			s.t.Fatalf("serve after SIGTERM: %v", err)
		}
	case <-time.After(time.Minute):
		s.t.Fatal("serve did not stop after SIGTERM")
	}
}

// bookReport is what `mcp-executor verify --json` says of a book.
type bookReport struct {
	Intact      bool `json:"intact"`
	WithinSlips bool `json:"withinSlips"`
	Counts      struct {
		Stubs         int `json:"stubs"`
		Countersigned int `json:"countersigned"`
		Approved      int `json:"approved"`
		Refusals      int `json:"refusals"`
	} `json:"counts"`
}

// verifyBook runs `mcp-executor verify` on the book, and `compare` of the copy against it, and fails
// the test unless the book is intact and within its slip and the copy and book agree.
func verifyBook(t *testing.T, env *devsetup.Env) bookReport {
	t.Helper()
	out, err := exec.Command(binary(t), "verify", env.BookPath, "--trust", env.Thumbprint, "--json").Output()
	var rep bookReport
	if jerr := json.Unmarshal(out, &rep); err != nil || jerr != nil || !rep.Intact || !rep.WithinSlips {
		t.Fatalf("verify: %v %v\n%s", err, jerr, out)
	}
	if out, err := exec.Command(binary(t), "compare", "--config", env.SettingsPath).CombinedOutput(); err != nil {
		t.Fatalf("compare: %v\n%s", err, out)
	}
	return rep
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
