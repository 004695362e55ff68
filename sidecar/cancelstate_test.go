package sidecar_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/consent"
	"github.com/seed-6e06167c/mcp-executor/sidecar/page"
	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
)

// A cancellation the page wrote beside the copy (the executor's own state:
// in a pod the slip's folder is the settings' read-only mount) is
// honoured as one beside the slip is: the next call is refused and the
// cancellation goes into the book.
func TestCancellationOnTheExecutorsState(t *testing.T) {
	t.Parallel()
	o := passkeyOptions()
	o.Settings["executor"] = map[string]any{"keys": "keys/executor.jwk", "copy": "state/copy.jsonl", "copyKey": "copy.jsonl.key"}
	o, record := serverOpts(t, "sdk", o)
	env, err := devsetup.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(env.Dir, "state"), 0o700); err != nil {
		t.Fatal(err)
	}
	set, _, err := settings.Load(env.SettingsPath)
	if err != nil {
		t.Fatal(err)
	}
	state := page.StateCancellationPath(set)
	if filepath.Dir(state) != filepath.Join(env.Dir, "state") || state == page.CancellationPath(env.SlipPath) {
		t.Fatalf("the page would write the cancellation at %s", state)
	}
	h := launch(t, env)
	h.record = record
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs := h.client(ctx)

	prep, err := consent.PrepareCancellation(env.Slip.Fingerprint, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(state+".tmp", canon.MustMarshal(signedWithPasskey(t, env, prep)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(state+".tmp", state); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "send", Arguments: map[string]any{"recipients": []string{"a"}}})
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError {
			refusedWith(t, res, "after-cancellation")
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the cancellation beside the copy was not honoured")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cs.Close()
	h.stop()
	if lines := bookLines(t, env.BookPath); !slices.ContainsFunc(lines, func(keys []string) bool { return slices.Equal(keys, []string{"cancellation"}) }) {
		t.Fatalf("no cancellation in the book: %v", lines)
	}
	h.checkBook()
}
