package sidecar_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/internal/syncbuf"
	"github.com/seed-6e06167c/mcp-executor/sidecar"
	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// readings counts, under wire's read hook, the readings of the bytes of
// one client line: a line read whole (wire.Inspect) that holds the line's
// mark and its method, and any part of a line read with a JSON Pointer
// that holds the mark. The mark stands in the call's arguments only, so
// a walk of params._meta alone is not counted, and the server's answer
// (which echoes the arguments but names no method) is not either.
type readings struct {
	mu            sync.Mutex
	mark          []byte
	lines, points int
}

func countReadings(t *testing.T) *readings {
	var b [8]byte
	_, _ = rand.Read(b[:])
	r := &readings{mark: []byte("mark-" + hex.EncodeToString(b[:]))}
	t.Cleanup(wire.SetReadHook(func(what string, p []byte) {
		if !bytes.Contains(p, r.mark) {
			return
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		switch {
		case what == wire.ReadLine && bytes.Contains(p, []byte(`"tools/call"`)):
			r.lines++
		case what == wire.ReadPointer:
			r.points++
		}
	}))
	return r
}

func (r *readings) counts() (lines, points int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lines, r.points
}

// TestCallLineReadOnce: a client's tools/call line is read whole once (by
// the session, as it comes in) and never again on its way to the tool
// server: not by the judge, the telemetry or the edit that gives it the
// executor's id and _meta members (which use the params the session read
// once, wire.ReadCall), not by the router in front of several servers,
// and not by an HTTP server's connection, which each take the line with
// its reading. No JSON Pointer walks its params. Behind one stdio server,
// and behind the router to a stdio server and to an HTTP server (go-sdk's
// streamable HTTP handler, in this process).
func TestCallLineReadOnce(t *testing.T) {
	o, _ := serverOpts(t, "sdk", devsetup.Options{
		Tools:    map[string]devsetup.Tool{"echo": {Action: "provared.data.read"}},
		Settings: map[string]any{"callIdInMeta": true},
	})
	single, err := devsetup.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	web := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newSDKServer() }, nil))
	defer web.Close()
	o.Dir = t.TempDir()
	routed, err := devsetup.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	editSettings(t, routed.SettingsPath, func(set map[string]any) {
		set["servers"] = map[string]any{"sdk": set["server"], "web": map[string]any{"url": web.URL}}
		delete(set, "server")
		set["tools"] = map[string]any{"sdk.echo": map[string]any{"action": "provared.data.read"},
			"web.echo": map[string]any{"action": "provared.data.read"}}
	})
	for _, c := range []struct {
		name string
		env  *devsetup.Env
		tool string
	}{{"one server", single, "echo"}, {"router to a stdio server", routed, "sdk.echo"}, {"router to an HTTP server", routed, "web.echo"}} {
		t.Run(c.name, func(t *testing.T) {
			stderr := &syncbuf.Buffer{}
			e, err := sidecar.Open(context.Background(), sidecar.OpenOptions{ConfigPath: c.env.SettingsPath,
				Logger: slog.New(slog.NewJSONHandler(stderr, nil))})
			if err != nil {
				t.Fatal(err)
			}
			h := serveInProcess(t, e, c.env, stderr)
			defer func() {
				h.in.Close()
				<-h.done
				if err := e.Close(); err != nil {
					t.Error(err)
				}
				if t.Failed() {
					t.Logf("executor stderr:\n%s", stderr)
				}
			}()
			h.rawInitialize()
			r := countReadings(t)
			h.send(`{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"` + c.tool +
				`","arguments":{"text":"` + string(r.mark) + `"},"_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}}`)
			got := h.recv()
			if !strings.Contains(got, `"id":"c1","result"`) || !strings.Contains(got, string(r.mark)) {
				t.Fatalf("the call was answered %s", got)
			}
			if lines, points := r.counts(); lines != 1 || points != 0 {
				t.Errorf("the call's line was read whole %d times and its params walked by %d JSON Pointers on its way to the server; want once and none", lines, points)
			}
		})
	}
}
