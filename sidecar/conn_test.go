package sidecar_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/internal/syncbuf"
	"github.com/seed-6e06167c/mcp-executor/sidecar"
	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// fakeConn is a ClientConn written for the test: it stands for any
// transport (stdio, the socket, the HTTP front), which is what the
// engine's API is for, so a double of the transport is the part under
// test's own boundary. Its reads are what the test hands it; its writes
// are kept with the related id the session gave each.
type fakeConn struct {
	reads chan fakeRead

	mu     sync.Mutex
	writes []written
	wrote  chan struct{} // a token for each write
}

type fakeRead struct {
	line []byte
	m    *wire.Message
	err  error
}

type written struct{ line, related string }

func newFakeConn() *fakeConn {
	return &fakeConn{reads: make(chan fakeRead), wrote: make(chan struct{}, 64)}
}

func (c *fakeConn) ReadMessage() ([]byte, *wire.Message, error) {
	r, ok := <-c.reads
	if !ok {
		return nil, nil, io.EOF
	}
	return r.line, r.m, r.err
}

func (c *fakeConn) WriteLine(line, related []byte) error {
	c.mu.Lock()
	c.writes = append(c.writes, written{string(line), string(related)})
	c.mu.Unlock()
	c.wrote <- struct{}{}
	return nil
}

// next waits for the session's next line to the client.
func (c *fakeConn) next(t *testing.T) written {
	t.Helper()
	select {
	case <-c.wrote:
	case <-time.After(20 * time.Second):
		t.Fatal("the session wrote nothing to the client within 20 s")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.writes[0]
	c.writes = c.writes[1:]
	return w
}

// read hands the session one line as the transport read it: with its
// reading, or with the fault wire.Inspect finds in it.
func (c *fakeConn) read(line string) {
	m, err := wire.Inspect([]byte(line))
	c.reads <- fakeRead{line: []byte(line), m: m, err: err}
}

// TestServeConn: through a ClientConn the session reads each message with
// its reading, answers a line that is not acceptable and reads on, and
// writes every line with the id of the client's request it belongs to: an
// answer to a call or to a request passed through, the error for a line
// whose id could be read, the executor's own elicitation for a held call;
// none where no request is known. A transport's error ends the client's
// input as its end does: the calls in flight finish, and the session ends
// with nil.
func TestServeConn(t *testing.T) {
	o, _ := serverOpts(t, "sdk", approvalOptions(map[string]any{"timeout": 1000}, nil))
	env, err := devsetup.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncbuf.Buffer{}
	e, err := sidecar.Open(context.Background(), sidecar.OpenOptions{ConfigPath: env.SettingsPath,
		Logger: slog.New(slog.NewJSONHandler(stderr, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := e.Close(); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			t.Logf("executor stderr:\n%s", stderr)
		}
	}()
	c := newFakeConn()
	done := make(chan error, 1)
	go func() { done <- e.ServeConn(context.Background(), c, stderr) }()

	for _, s := range []struct {
		name    string
		read    func()
		want    string // in the line written
		related string
	}{
		{"initialize: answered under its id", func() {
			c.read(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},"clientInfo":{"name":"fake","version":"1"}}}`)
		}, `"id":"init","result"`, `"init"`},
		{"a request passed through", func() { c.read(`{"jsonrpc":"2.0","id":7,"method":"ping"}`) }, `"id":7,"result"`, `7`},
		{"a call", func() {
			c.read(`{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"send","arguments":{"to":"x"}}}`)
		}, `"id":"c1","result"`, `"c1"`},
		{"a call refused", func() {
			c.read(`{"jsonrpc":"2.0","id":"c2","method":"tools/call","params":{"name":"nothing_names_it","arguments":{}}}`)
		}, `Not taken by the executor`, `"c2"`},
		{"a line with an id that is not acceptable", func() {
			c.read(`{"jsonrpc":"2.0","id":"bad","method":"tools/call","params":{"name":"send","NAME":"x"}}`)
		}, `"id":"bad","error":{"code":-32600`, `"bad"`},
		{"a line with no id to read", func() { c.read(`[1,2]`) }, `"id":null,"error":{"code":-32600`, ``},
		{"a line over 16 MiB", func() { c.reads <- fakeRead{err: &wire.TooLongError{Length: wire.MaxLine + 1}} },
			`"id":null,"error":{"code":-32600,"message":"line longer than 16 MiB"`, ``},
		{"a held call: the executor's own elicitation", func() {
			c.read(`{"jsonrpc":"2.0","id":"h1","method":"tools/call","params":{"name":"echo","arguments":{"text":"ask"}}}`)
		}, `"method":"elicitation/create"`, `"h1"`},
	} {
		s.read()
		if got := c.next(t); !strings.Contains(got.line, s.want) || got.related != s.related {
			t.Fatalf("%s: wrote %s with related %q; want %s with related %q", s.name, got.line, got.related, s.want, s.related)
		}
	}
	// The transport fails: the session ends once the held call has its
	// answer (its elicitation gets none: the client is gone).
	c.reads <- fakeRead{err: errors.New("the transport broke")}
	for {
		select {
		case err := <-done:
			if err != nil || !strings.Contains(stderr.String(), "the transport broke") {
				t.Fatalf("ServeConn after the transport broke: %v (and the log names the error)", err)
			}
			return
		case <-c.wrote: // the held call's answers, after its elicitation ended
		case <-time.After(30 * time.Second):
			t.Fatal("the session did not end after the transport broke")
		}
	}
}

// TestServeConnInputEnds: the end of the client's input ends the session
// with nil.
func TestServeConnInputEnds(t *testing.T) {
	o, _ := serverOpts(t, "sdk", baseOptions())
	env, err := devsetup.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	e, err := sidecar.Open(context.Background(), sidecar.OpenOptions{ConfigPath: env.SettingsPath})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	c := newFakeConn()
	done := make(chan error, 1)
	go func() { done <- e.ServeConn(context.Background(), c, io.Discard) }()
	c.read(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fake","version":"1"}}}`)
	if got := c.next(t); !strings.Contains(got.line, `"id":0,"result"`) {
		t.Fatalf("initialize: %+v", got)
	}
	c.read(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.read(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
	if got := c.next(t); !strings.Contains(got.line, `"id":1,"result"`) || got.related != "1" {
		t.Fatalf("the call: %+v", got)
	}
	close(c.reads)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ServeConn after the input ended: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the session did not end after its input did")
	}
}
