package sidecar_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/internal/syncbuf"
	"github.com/seed-6e06167c/mcp-executor/sidecar/approval"
	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// nodeClientOut is what testdata/npm/approval-client.mjs prints.
type nodeClientOut struct {
	Result struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool           `json:"isError"`
		Meta    map[string]any `json:"_meta"`
	} `json:"result"`
	Asked []string `json:"asked"`
}

// TestApprovalTypeScriptClient: the official TypeScript SDK client starts
// the real binary and calls a held tool: its elicitation handler accepts
// (runs once with its receipt) or declines (a denial, never sent); a client
// without the capability is never asked, and the call waits for the queue,
// answered here with `approve --id … --yes` as a second terminal would.
func TestApprovalTypeScriptClient(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is needed for the TypeScript SDK client (%v): run ./scripts/test.sh setup in the repository's folder", err)
	}
	needNPM(t, "sdk")
	script, err := filepath.Abs(filepath.Join("..", "testdata", "npm", "approval-client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	bin := executorBin
	if bin == "" {
		// Sessions run in this process elsewhere; node needs a program to start.
		bin = filepath.Join(t.TempDir(), "mcp-executor")
		if out, err := exec.Command("go", "build", "-o", bin, "../cmd/mcp-executor").CombinedOutput(); err != nil {
			t.Fatalf("building the executor for node to start: %v\n%s", err, out)
		}
	}
	for _, mode := range []string{"accept", "decline", "none"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			o, record := serverOpts(t, "sdk", approvalOptions(true, nil))
			env, err := devsetup.Build(o)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, script, bin, env.SettingsPath, mode, "echo", `{"text":"from node","apiKey":"sk-live-123"}`)
			var stdout bytes.Buffer
			stderr := &syncbuf.Buffer{}
			cmd.Stdout, cmd.Stderr = &stdout, stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if mode == "none" {
				h := &harness{t: t, env: env, stderr: stderr}
				f := waitRequests(t, h, 1)[0]
				if got := receivedCalls(t, record); len(got) != 0 {
					t.Fatalf("the server saw %v before the approval", got)
				}
				if out, code := runExecutor(t, "approve", "--config", env.SettingsPath, "--id", f.ID, "--yes"); code != 0 {
					t.Fatalf("approve exits %d: %s", code, out)
				}
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("the node client: %v\nstdout %s\nstderr %s", err, stdout.String(), stderr.String())
			}
			var out nodeClientOut
			if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &out); err != nil {
				t.Fatalf("the node client printed %q: %v", stdout.String(), err)
			}
			calls := receivedCalls(t, record)
			switch mode {
			case "accept", "none":
				if out.Result.IsError || len(out.Result.Content) == 0 || !strings.HasPrefix(out.Result.Content[0].Text, "echo ") {
					t.Fatalf("the approved call answered %+v; stderr:\n%s", out.Result, stderr.String())
				}
				if !slices.Equal(calls, []string{"echo"}) {
					t.Fatalf("the server saw %v, want one echo", calls)
				}
			case "decline":
				if !out.Result.IsError || out.Result.Meta[wire.MetaRefused] != "approval-declined" {
					t.Fatalf("the declined call answered %+v", out.Result)
				}
				if len(calls) != 0 {
					t.Fatalf("the server saw %v", calls)
				}
			}
			if mode == "none" && len(out.Asked) != 0 {
				t.Fatalf("a client without the capability was asked %q", out.Asked)
			}
			if mode != "none" && (len(out.Asked) != 1 || !strings.Contains(out.Asked[0], "echo") || strings.Contains(out.Asked[0], "sk-live-123")) {
				t.Fatalf("the client was asked %q", out.Asked)
			}
			lines := readCopy(t, env.CopyPath, env.CopyKey, "test executor")
			answers, _ := answersOf(lines)
			want := map[string]string{"accept": approval.ChannelElicitation, "decline": approval.ChannelElicitation, "none": approval.ChannelCommand}[mode]
			if len(answers) != 1 || answers[0].Channel != want || (answers[0].Answer == copylog.AnswerApproved) == (mode == "decline") {
				t.Fatalf("answers %+v", answers)
			}
			recordsAgree(t, &harness{t: t, env: env, stderr: stderr})
		})
	}
}
