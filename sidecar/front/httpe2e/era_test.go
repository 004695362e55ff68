package httpe2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/internal/syncbuf"
)

// Every result and error the executor writes itself is valid in the era the client speaks, over stdio,
// the Unix socket and HTTP: @modelcontextprotocol/client 2.4.0 pinned to 2026-07-28, in front of a
// two-era server made with @modelcontextprotocol/server 2.4.0's serveStdio, gets its refused call as a
// complete tool result (resultType), a held call through input_required, a call the executor's timeout
// ends as error 1002, and a cancelled call cancelled; before, the client failed on every refusal
// ("missing required resultType"). The server's own answers pass as it wrote them.
func TestEraValidResultsOverEveryTransport(t *testing.T) {
	npm := npmDir(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is needed for the TypeScript clients: %v", err)
	}
	server, err := filepath.Abs(filepath.Join("testdata", "ts-server.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	for _, transport := range []string{"stdio", "socket", "http"} {
		t.Run(transport, func(t *testing.T) {
			env, err := devsetup.Build(devsetup.Options{Dir: t.TempDir(), Command: node, Args: []string{server},
				Env: map[string]map[string]any{"NPM_DIR": {"value": npm}}, Tools: testTools, Settings: map[string]any{"timeout": 2000}})
			if err != nil {
				t.Fatal(err)
			}
			var args []string
			switch transport {
			case "stdio":
				args = []string{"stdio", binary(t), "stdio", "--config", env.SettingsPath}
			case "socket":
				sock := filepath.Join(env.Dir, "executor.sock")
				cmd := exec.Command(binary(t), "serve", "--config", env.SettingsPath, "--listen", "unix:"+sock)
				log := &syncbuf.Buffer{}
				cmd.Stderr = log
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
				deadline := time.Now().Add(30 * time.Second)
				for {
					if _, err := os.Stat(sock); err == nil {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("no socket\n%s", log)
					}
					time.Sleep(20 * time.Millisecond)
				}
				args = []string{"stdio", binary(t), "bridge", "--connect", "unix:" + sock}
			case "http":
				args = []string{"http", serveHTTP(t, env).url}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join("testdata", "http-client.mjs"), "v2"}, args...)...)
			cmd.Env = append(os.Environ(), "NPM_DIR="+npm, "CLIENT_NO_ANSWER=1")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("the client: %v\n%s", err, lastLines(stderr.String(), 40))
			}
			var r struct {
				tsResult
				NoAnswer any `json:"noAnswer"`
			}
			if err := json.Unmarshal(out, &r); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			switch {
			case r.Echo.Text != "hello over http":
				t.Errorf("echo %+v", r.Echo)
			case !r.Refused.IsError || !strings.HasPrefix(r.Refused.Text, "Not taken by the executor: "):
				t.Errorf("refused %+v", r.Refused)
			case r.Held.Text != "held call ran: please" || r.Held.Asked != 1:
				t.Errorf("held %+v", r.Held)
			case !r.Cancelled || r.After != "still here":
				t.Errorf("cancelled %v, after %q", r.Cancelled, r.After)
			case r.NoAnswer != float64(1002):
				t.Errorf("the call the timeout ended: %v, want error 1002", r.NoAnswer)
			}
		})
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
