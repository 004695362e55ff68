package sidecar_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/sidecar"
)

// A full book: the next call is not taken (1001, saying the book is full
// and what to do), nothing reaches the server, the book and the copy do
// not grow, and BookFull is closed with the reason.
func TestBookFull(t *testing.T) {
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
	select {
	case <-e.BookFull():
		t.Fatal("BookFull closed with room in the book")
	default:
	}
	size := sidecar.BookSize(e)
	sidecar.CallsRecorded(e) // the first call's receipt line follows its answer
	copyLines := len(readCopy(t, env.CopyPath, env.CopyKey, "test executor"))
	sidecar.FillBookAt(e, size)
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "b"}})
	we := rpcError(t, err)
	if we.Code != 1001 || !strings.Contains(we.Message, "the book is full") || !strings.Contains(we.Message, "new slip") {
		t.Errorf("code %d %q", we.Code, we.Message)
	}
	select {
	case <-e.BookFull():
	default:
		t.Fatal("BookFull not closed")
	}
	if why := e.BookFullReason(); !strings.Contains(why, "the book is full") {
		t.Errorf("reason %q", why)
	}
	if got := sidecar.BookSize(e); got != size {
		t.Errorf("the book grew from %d to %d entries", size, got)
	}
	if got := len(readCopy(t, env.CopyPath, env.CopyKey, "test executor")); got != copyLines {
		t.Errorf("the copy grew from %d to %d lines", copyLines, got)
	}
	cs.Close()
	<-h.done
	h.done <- 0
	if got := receivedCalls(t, record); len(got) != 1 {
		t.Errorf("the server received %v", got)
	}
}
