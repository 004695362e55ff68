package httpe2e

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-6e06167c/mcp-executor/internal/syncbuf"
)

// --max-sessions bounds the socket's sessions and the HTTP endpoint's together: with one slot, while a
// client holds a session through the socket an HTTP initialize is refused (503, error 1001 naming the
// cap), and is taken once that session ended.
func TestSessionCapSharedWithTheSocket(t *testing.T) {
	env := testEnv(t, nil)
	sock := filepath.Join(env.Dir, "executor.sock")
	cmd := exec.Command(binary(t), "serve", "--config", env.SettingsPath, "--listen", "unix:"+sock, "--listen", "http://127.0.0.1:0/mcp", "--max-sessions", "1")
	log := &syncbuf.Buffer{}
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	url := serveURL(t, log)
	if _, err := os.Stat(sock); err != nil {
		t.Fatalf("no socket beside the HTTP endpoint: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "socket-client", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(binary(t), "bridge", "--connect", "unix:"+sock)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	initialize := func() (int, string) {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return resp.StatusCode, b.String()
	}
	if st, body := initialize(); st != http.StatusServiceUnavailable || !strings.Contains(body, `"code":1001`) || !strings.Contains(body, "already runs 1 sessions") {
		t.Fatalf("an HTTP session beside the socket's, with one slot: %d %s", st, body)
	}
	_ = cs.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, body := initialize()
		if st == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the socket's session ended: %d %s", st, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
