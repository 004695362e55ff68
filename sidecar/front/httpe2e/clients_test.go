package httpe2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// npmDir is testdata/npm, with the TypeScript SDKs installed.
func npmDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "..", "testdata", "npm"))
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"sdk", "client"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", pkg, "package.json")); err != nil {
			t.Fatalf("@modelcontextprotocol/%s is not installed (%v): run `npm ci --prefix testdata/npm` (or ./scripts/test.sh setup) in the repository", pkg, err)
		}
	}
	return dir
}

// tsResult is what testdata/http-client.mjs prints.
type tsResult struct {
	SDK     string   `json:"sdk"`
	Version string   `json:"version"`
	Session string   `json:"session"`
	Tools   []string `json:"tools"`
	Echo    struct {
		Text    string `json:"text"`
		IsError bool   `json:"isError"`
	} `json:"echo"`
	Refused struct {
		Text    string         `json:"text"`
		IsError bool           `json:"isError"`
		Meta    map[string]any `json:"meta"`
	} `json:"refused"`
	Held struct {
		Text    string `json:"text"`
		IsError bool   `json:"isError"`
		Asked   int    `json:"asked"`
	} `json:"held"`
	Cancelled bool   `json:"cancelled"`
	After     string `json:"after"`
}

// The official TypeScript SDKs through the binary's HTTP endpoint: 1.32.2's StreamableHTTPClientTransport
// (a 2025-11-25 session) and @modelcontextprotocol/client 2.4.0 pinned to 2026-07-28 (no session). Each
// lists the tools, gets an allowed call through, a refused call refused as a tool result, a call held for
// approval approved (elicitation; input_required answered by a retry), and a cancelled call cancelled;
// the book then holds the four calls sent and the one refusal, and checks intact.
func TestTypeScriptClients(t *testing.T) {
	npm := npmDir(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is needed for the TypeScript clients: %v", err)
	}
	for _, sdk := range []string{"v1", "v2"} {
		t.Run(sdk, func(t *testing.T) {
			env := testEnv(t, nil)
			s := serveHTTP(t, env)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			start := time.Now()
			cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "http-client.mjs"), sdk, "http", s.url)
			cmd.Env = append(os.Environ(), "NPM_DIR="+npm)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("the %s client: %v\n%s", sdk, err, stderr.String())
			}
			var r tsResult
			if err := json.Unmarshal(out, &r); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			t.Logf("%s: %s", sdk, out)
			wantSession := map[string]string{"v1": "yes", "v2": "no"}[sdk]
			switch {
			case r.Session != wantSession:
				t.Errorf("session %q, want %q", r.Session, wantSession)
			case !slices.Contains(r.Tools, "echo") || !slices.Contains(r.Tools, "held"):
				t.Errorf("tools %v", r.Tools)
			case r.Echo.Text != "hello over http" || r.Echo.IsError:
				t.Errorf("echo %+v", r.Echo)
			case !r.Refused.IsError || !strings.HasPrefix(r.Refused.Text, "Not taken by the executor: ") || r.Refused.Meta["red.prova/refused"] == nil:
				t.Errorf("refused %+v", r.Refused)
			case r.Held.Text != "held call ran: please" || r.Held.Asked != 1:
				t.Errorf("held %+v", r.Held)
			case !r.Cancelled || r.After != "still here":
				t.Errorf("cancelled %v, after %q", r.Cancelled, r.After)
			}
			if took := time.Since(start); took > 19*time.Second {
				t.Errorf("the client took %s: the cancelled call ran to its end", took)
			}
			s.stop()
			rep := verifyBook(t, env)
			if rep.Counts.Stubs != 4 || rep.Counts.Refusals != 1 {
				t.Fatalf("the book holds %+v; want 4 stubs (echo, held, slow, echo) and 1 refusal", rep.Counts)
			}
		})
	}
}
