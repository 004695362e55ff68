package sidecar_test

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/internal/syncbuf"
	"github.com/seed-6e06167c/mcp-executor/sidecar"
)

// serveInProcess runs one more session of e over pipes.
func serveInProcess(t *testing.T, e *sidecar.Executor, env *devsetup.Env, stderr *syncbuf.Buffer) *harness {
	t.Helper()
	h := &harness{t: t, env: env, done: make(chan int, 1), stderr: stderr}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	h.in, h.out = inW, bufio.NewReader(outR)
	go func() {
		err := e.Serve(context.Background(), inR, outW, stderr)
		outW.Close()
		code, _ := sidecar.IsExit(err)
		h.done <- code
	}()
	return h
}

// A client that does not read its answers holds up no other session: when
// the book cannot be written, a call of another session still gets its
// error while the first client reads nothing.
func TestStalledClientHoldsUpNoOtherSession(t *testing.T) {
	o, record := serverOpts(t, "sdk", baseOptions())
	env, err := devsetup.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncbuf.Buffer{}
	e, err := sidecar.Open(context.Background(), sidecar.OpenOptions{ConfigPath: env.SettingsPath, Logger: slog.New(slog.NewJSONHandler(stderr, nil))})
	if err != nil {
		t.Fatal(err)
	}
	a := serveInProcess(t, e, env, stderr)
	b := serveInProcess(t, e, env, stderr)
	defer func() {
		// Let the first client read again, and end both sessions.
		go func() { _, _ = io.Copy(io.Discard, a.out) }() // drained to its end; nothing in it is checked
		a.in.Close()
		b.in.Close()
		<-a.done
		<-b.done
		e.Close()
		if t.Failed() {
			t.Logf("executor stderr:\n%s", stderr.String())
		}
	}()

	a.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}`)
	if got := a.recv(); !strings.Contains(got, `"result"`) {
		t.Fatalf("initialize: %s", got)
	}
	a.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cs := b.client(ctx)

	// Three calls in flight, in this order in the book: a1 ends first, a2
	// and b1 later.
	a.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"MS":300}}}`)
	a.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"MS":800}}}`)
	// The servers' record shows when a call was taken: a1 and a2 before b1, and b1 before the book breaks.
	taken := func(n int) {
		deadline := time.Now().Add(10 * time.Second)
		for len(receivedCalls(t, record)) < n {
			if time.Now().After(deadline) {
				t.Fatalf("the servers received %d calls, want %d", len(receivedCalls(t, record)), n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	taken(2)
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"MS": 800}})
		errc <- err
	}()
	taken(3)
	if err := sidecar.BreakBook(e); err != nil {
		t.Fatal(err)
	}
	// a1's stub cannot be written; a2's neither, and its error waits for a
	// client that reads nothing. b1's error must still come.
	select {
	case err := <-errc:
		if we := rpcError(t, err); we.Code != -32603 {
			t.Errorf("b1: code %d %q", we.Code, we.Message)
		}
	case <-ctx.Done():
		t.Fatal("b1 never got its answer: the other session's unread answer held it up")
	}
	cs.Close()
}
