package sidecar_test

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/internal/syncbuf"
	"github.com/seed-6e06167c/mcp-executor/receipts/receipt"
	"github.com/seed-6e06167c/mcp-executor/sidecar"
)

// inProcess opens the executor in this process (so that a test can break
// its files) and serves one session over pipes.
func inProcess(t *testing.T, env *devsetup.Env) (*sidecar.Executor, *harness) {
	t.Helper()
	return openInProcess(t, env, sidecar.OpenOptions{})
}

// openInProcess opens the executor in this process with o (its ConfigPath
// and Logger set here) and serves one session over pipes; the session ends
// with the test (or earlier, by h.stop).
func openInProcess(t *testing.T, env *devsetup.Env, o sidecar.OpenOptions) (*sidecar.Executor, *harness) {
	t.Helper()
	h := &harness{t: t, env: env, done: make(chan int, 1), stderr: &syncbuf.Buffer{}}
	o.ConfigPath = env.SettingsPath
	o.Logger = slog.New(slog.NewJSONHandler(h.stderr, nil))
	e, err := sidecar.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	h.in, h.out = inW, bufio.NewReader(outR)
	go func() {
		err := e.Serve(context.Background(), inR, outW, h.stderr)
		outW.Close()
		e.Close()
		code, _ := sidecar.IsExit(err)
		h.done <- code
	}()
	t.Cleanup(func() {
		h.in.Close()
		<-h.done
		if t.Failed() {
			t.Logf("executor stderr:\n%s", h.stderr.String())
		}
	})
	return e, h
}

// The book cannot be written after a call: the copy gets a not-written line
// with the outcome, the client an error, the executor takes no more calls;
// the next start writes the receipt from the copy.
func TestBookUnwritable(t *testing.T) {
	o, record := serverOpts(t, "sdk", baseOptions())
	env, err := devsetup.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	e, h := inProcess(t, env)
	h.record = record
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := h.client(ctx)
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "a"}}); err != nil || res.IsError {
		t.Fatal(err)
	}
	if err := sidecar.BreakBook(e); err != nil {
		t.Fatal(err)
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "b"}})
	if we := rpcError(t, err); we.Code != -32603 {
		t.Errorf("code %d %q", we.Code, we.Message)
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "c"}})
	if we := rpcError(t, err); we.Code != 1001 {
		t.Errorf("code %d %q", we.Code, we.Message)
	}
	cs.Close()
	<-h.done
	h.done <- 0
	if got := receivedCalls(t, record); len(got) != 2 {
		t.Errorf("the server received %v", got)
	}
	lines := readCopy(t, env.CopyPath, env.CopyKey, "test executor")
	u := copylog.UnfinishedCalls(lines)
	if len(u) != 1 || u[0].Outcome == nil || u[0].Outcome.Name != receipt.LabelToolResult {
		t.Fatalf("unfinished %+v", u)
	}

	// The next start writes the receipt with the outcome the copy holds.
	h2 := launch(t, env)
	h2.stop()
	h2.checkBook()
	stubs := entriesOf(readBook(t, env.BookPath), "stub")
	if len(stubs) != 2 {
		t.Fatalf("%d stubs", len(stubs))
	}
	d := detailsOf(stubs[1].Content)
	if d[receipt.LabelToolResult] != u[0].Outcome.SHA256 || d[receipt.LabelWrittenLate] == "" {
		t.Errorf("late stub details %v", d)
	}
}

// The copy cannot be written: the call is not sent (1001) and the executor
// takes no more calls.
func TestCopyUnwritable(t *testing.T) {
	o, record := serverOpts(t, "sdk", baseOptions())
	env, err := devsetup.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	e, h := inProcess(t, env)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := h.client(ctx)
	if err := sidecar.BreakCopy(e); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "a"}})
		if we := rpcError(t, err); we.Code != 1001 {
			t.Errorf("call %d: code %d %q", i, we.Code, we.Message)
		}
	}
	cs.Close()
	if got := receivedCalls(t, record); len(got) != 0 {
		t.Errorf("the server received %v", got)
	}
}
