package sidecar_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-6e06167c/mcp-executor/copylog"
)

// TestRestartFromTheCopyCheckpoint: a stop saves the copy's checkpoint,
// and the next start opens the copy from it. What that start needs of the
// lines the checkpoint covers is still there: the quota window counts the
// calls made before the stop (the third call in the hour is refused), the
// redaction salt is the one already written (no second salt line), and the
// copy reads whole after the calls of both runs.
func TestRestartFromTheCopyCheckpoint(t *testing.T) {
	t.Parallel()
	o := baseOptions()
	o.Settings = map[string]any{"tools": map[string]any{
		"echo": map[string]any{"action": "provared.data.read", "quota": map[string]any{"perHour": 2}},
	}}
	h := startWith(t, "sdk", o)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	echo := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}
	cs := h.client(ctx)
	for range 2 {
		if res, err := cs.CallTool(ctx, echo); err != nil || res.IsError {
			t.Fatalf("a call within the quota: %v %+v", err, res)
		}
	}
	cs.Close()
	if code := h.stop(); code != 0 {
		t.Fatalf("the executor exited %d:\n%s", code, h.stderr.String())
	}
	if _, err := os.Stat(copylog.CheckpointPath(h.env.CopyPath)); err != nil {
		t.Fatalf("no copy checkpoint after the stop: %v\n%s", err, h.stderr.String())
	}

	again := launch(t, h.env)
	cs = again.client(ctx)
	res, err := cs.CallTool(ctx, echo)
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || res.Meta["red.prova/refused"] != "quota" {
		t.Fatalf("the third call in the hour was not refused for the quota: %+v", res)
	}
	cs.Close()
	if code := again.stop(); code != 0 {
		t.Fatalf("the executor exited %d:\n%s", code, again.stderr.String())
	}
	logs := again.stderr.String()
	for _, want := range []string{"copy opened from its checkpoint", `"msg":"quota windows restored from the copy","calls":2`} {
		if !strings.Contains(logs, want) {
			t.Errorf("the second start's log lacks %q:\n%s", want, logs)
		}
	}
	lines, err := copylog.ReadFile(h.env.CopyPath, h.env.CopyKey, "test executor")
	if err != nil {
		t.Fatal(err)
	}
	salts := 0
	for _, ln := range lines {
		if ln.Kind == copylog.KindRedactionSalt {
			salts++
		}
	}
	if salts != 1 {
		t.Errorf("%d redaction-salt lines in the copy, want 1", salts)
	}
}

// TestChangedLineUnderTheCopyCheckpointIsRefused: a receipt line the
// copy's checkpoint covers (one a start from the checkpoint does not
// parse) is changed while the executor is stopped. The next start finds
// the covered bytes changed, ignores the checkpoint, reads the whole copy,
// and refuses to start, naming the line and saying why the checkpoint did
// not serve.
func TestChangedLineUnderTheCopyCheckpointIsRefused(t *testing.T) {
	t.Parallel()
	h := startWith(t, "sdk", baseOptions())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs := h.client(ctx)
	for range 3 {
		if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}); err != nil || res.IsError {
			t.Fatalf("a call: %v %+v", err, res)
		}
	}
	cs.Close()
	if code := h.stop(); code != 0 {
		t.Fatalf("the executor exited %d:\n%s", code, h.stderr.String())
	}
	data, err := os.ReadFile(h.env.CopyPath)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(data), `"stub":"`) + len(`"stub":"`)
	line := strings.Count(string(data[:i]), "\n") + 1
	data[i] ^= 1
	if err := os.WriteFile(h.env.CopyPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	again := launch(t, h.env)
	if code := again.exitCode(); code == 0 {
		t.Fatalf("the executor started on a changed copy:\n%s", again.stderr.String())
	}
	logs := again.stderr.String()
	for _, want := range []string{"its checkpoint was ignored", "changed since the checkpoint was saved", "line " + strconv.Itoa(line) + ": the tag does not check"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the refused start's log lacks %q:\n%s", want, logs)
		}
	}
}
