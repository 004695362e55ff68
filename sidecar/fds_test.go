package sidecar_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/internal/syncbuf"
	"github.com/seed-6e06167c/mcp-executor/sidecar"
)

// openFds counts this process's open file descriptors.
func openFds(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// A session that ends leaves no fd of its tool server behind: after several sessions of one executor
// the process holds as many fds as after the first.
func TestSessionEndClosesServerPipes(t *testing.T) {
	o, _ := serverOpts(t, "sdk", baseOptions())
	env, err := devsetup.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncbuf.Buffer{}
	e, err := sidecar.Open(context.Background(), sidecar.OpenOptions{ConfigPath: env.SettingsPath, Logger: slog.New(slog.NewJSONHandler(stderr, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	session := func() {
		h := serveInProcess(t, e, env, stderr)
		h.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}`)
		if got := h.recv(); !strings.Contains(got, `"result"`) {
			t.Fatalf("initialize: %s", got)
		}
		h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
		if got := h.recv(); !strings.Contains(got, `"result"`) {
			t.Fatalf("call: %s", got)
		}
		h.in.Close()
		go func() { _, _ = io.Copy(io.Discard, h.out) }() // drained to its end; nothing in it is checked
		<-h.done
	}
	session() // the first one opens what the process keeps (the poller)
	base := openFds(t)
	for range 3 {
		session()
	}
	if got := openFds(t); got != base {
		t.Fatalf("%d fds open after three more sessions, %d after the first: a session's pipes were left open\n%s", got, base, stderr)
	}
}
