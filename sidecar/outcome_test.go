package sidecar_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-6e06167c/mcp-executor/copylog"
)

func rpcError(t *testing.T, err error) *jsonrpc.Error {
	t.Helper()
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		t.Fatalf("not a JSON-RPC error: %v", err)
	}
	return we
}

// stubData reads the stub fingerprint from a 1002 error's data.
func stubData(t *testing.T, we *jsonrpc.Error) string {
	t.Helper()
	var d map[string]string
	if err := json.Unmarshal(we.Data, &d); err != nil {
		t.Fatalf("1002 data %s: %v", we.Data, err)
	}
	return d["red.prova/stub"]
}

// waitForCall waits until the test server has read n tool calls.
func waitForCall(t *testing.T, h *harness, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(receivedCalls(t, h.record)) < n {
		if time.Now().After(deadline) {
			t.Fatalf("the server never received call %d", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A call the server does not answer in time gets error 1002 with its
// stub's fingerprint; the stub names provared.error; the server is told the
// call is cancelled.
func TestTimeoutGivesNoAnswerReceipt(t *testing.T) {
	t.Parallel()
	o := baseOptions()
	o.Settings = map[string]any{"timeout": 1000}
	h := startWith(t, "sdk", o)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := h.client(ctx)
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"MS": 5000}})
	we := rpcError(t, err)
	if we.Code != 1002 {
		t.Fatalf("code %d", we.Code)
	}
	stub := stubData(t, we)
	// The session goes on.
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}}); err != nil || res.IsError {
		t.Fatalf("after the timeout: %v", err)
	}
	cs.Close()
	h.exitCode()
	h.checkBook()
	stubs := entriesOf(readBook(t, h.env.BookPath), "stub")
	if len(stubs) != 2 || stubs[0].Fingerprint != stub {
		t.Fatalf("stubs %d; first %s, 1002 named %s", len(stubs), stubs[0].Fingerprint, stub)
	}
	if d := detailsOf(stubs[0].Content); d["provared.error"] != fp(we.Message) || d["provared.tool-result"] != "" {
		t.Errorf("timeout stub details %v (message %q)", d, we.Message)
	}
	cancelled := false
	for _, m := range serverLines(t, h.record) {
		if m["method"] == "notifications/cancelled" {
			cancelled = true
		}
	}
	if !cancelled {
		t.Errorf("the server was not told the call was cancelled")
	}
}

// The client's cancellation of a call with the server is passed on; the
// call's stub names provared.error; a late answer is dropped.
func TestClientCancellation(t *testing.T) {
	t.Parallel()
	h := startWith(t, "sdk", baseOptions())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := h.client(ctx)
	callCtx, cancelCall := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"MS": 3000}})
		errc <- err
	}()
	waitForCall(t, h, 1)
	cancelCall()
	if err := <-errc; err == nil {
		t.Fatal("the cancelled call returned no error")
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}}); err != nil || res.IsError {
		t.Fatalf("after the cancellation: %v", err)
	}
	cs.Close()
	h.exitCode()
	h.checkBook()
	stubs := entriesOf(readBook(t, h.env.BookPath), "stub")
	if len(stubs) != 2 {
		t.Fatalf("%d stubs", len(stubs))
	}
	if d := detailsOf(stubs[0].Content); d["provared.error"] != fp("no answer: the call was cancelled") {
		t.Errorf("cancelled stub details %v", d)
	}
	var cancelledID any
	for _, m := range serverLines(t, h.record) {
		if m["method"] == "notifications/cancelled" {
			cancelledID = m["params"].(map[string]any)["requestId"]
		}
	}
	if id, _ := cancelledID.(string); len(id) < 10 || id[:9] != "provared-" {
		t.Errorf("the server was told to cancel %v", cancelledID)
	}
}

// The server ending mid-call: the call gets its stub and error 1002, and
// the executor exits with the server's code.
func TestServerExitMidCall(t *testing.T) {
	t.Parallel()
	h := startWith(t, "sdk", baseOptions())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := h.client(ctx)
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "exit", Arguments: map[string]any{}})
	if err == nil {
		t.Fatal("no error")
	}
	var we *jsonrpc.Error
	if errors.As(err, &we) && we.Code != 1002 {
		t.Errorf("code %d", we.Code)
	}
	if code := h.exitCode(); code != 3 {
		t.Errorf("the executor exited with %d, the server with 3", code)
	}
	h.checkBook()
	stubs := entriesOf(readBook(t, h.env.BookPath), "stub")
	if len(stubs) != 1 {
		t.Fatalf("%d stubs", len(stubs))
	}
	if d := detailsOf(stubs[0].Content); d["provared.error"] != fp("no answer: the tool server ended") {
		t.Errorf("stub details %v", d)
	}
}

// Past maxWaiting a call is answered 1001 and nothing is written or sent.
func TestMaxWaiting(t *testing.T) {
	o := baseOptions()
	o.Settings = map[string]any{"maxWaiting": 1}
	h := startWith(t, "sdk", o)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := h.client(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"MS": 1500}})
		errc <- err
	}()
	waitForCall(t, h, 1)
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "second"}})
	if we := rpcError(t, err); we.Code != 1001 {
		t.Errorf("code %d", we.Code)
	}
	if err := <-errc; err != nil {
		t.Fatalf("the first call: %v", err)
	}
	cs.Close()
	h.exitCode()
	if got := receivedCalls(t, h.record); len(got) != 1 {
		t.Errorf("the server received %v", got)
	}
	lines := readCopy(t, h.env.CopyPath, h.env.CopyKey, "test executor")
	if k := copyKinds(lines); k[copylog.KindSent] != 1 || k[copylog.KindDenial] != 0 {
		t.Errorf("copy kinds %v", k)
	}
	if n := len(entriesOf(readBook(t, h.env.BookPath), "stub")); n != 1 {
		t.Errorf("%d stubs", n)
	}
}

// Calls in flight together: every one gets its stub, in the order sent,
// and a limit counts the calls still in flight.
func TestConcurrentCallsCountInFlight(t *testing.T) {
	t.Parallel()
	o := baseOptions()
	o.Limits = []map[string]any{{"action": "provared.data.read", "count": 5}}
	h := startWith(t, "sdk", o)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := h.client(ctx)
	const n = 8
	type res struct {
		refused bool
		err     error
	}
	out := make(chan res, n)
	for i := 0; i < n; i++ {
		go func() {
			r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"MS": 300}})
			out <- res{err == nil && r.IsError, err}
		}()
	}
	refused := 0
	for i := 0; i < n; i++ {
		r := <-out
		if r.err != nil {
			t.Fatal(r.err)
		}
		if r.refused {
			refused++
		}
	}
	cs.Close()
	h.exitCode()
	if refused != n-5 {
		t.Errorf("%d refused, want %d", refused, n-5)
	}
	if got := receivedCalls(t, h.record); len(got) != 5 {
		t.Errorf("the server received %d calls", len(got))
	}
	h.checkBook()
	stubs := entriesOf(readBook(t, h.env.BookPath), "stub")
	if len(stubs) != 5 {
		t.Fatalf("%d stubs", len(stubs))
	}
	for i, s := range stubs {
		if s.Content["seq"].(float64) != float64(i) {
			t.Errorf("stub %d seq %v", i, s.Content["seq"])
		}
	}
}
