package boot

import (
	"bytes"
	"log/slog"
	"os"
	"strings"
	"testing"
)

// TestOpenBookCheckpoint: the first start writes a checkpoint, the next
// uses it; a checkpoint changed on disk, or one of another book, is
// ignored with a warning and the book still opens, verified whole.
func TestOpenBookCheckpoint(t *testing.T) {
	_, set, sl := devFolder(t)
	key := bytes.Repeat([]byte{3}, 32)
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	open := func() string {
		t.Helper()
		logs.Reset()
		bk, err := OpenBook(set, key, log)
		if err != nil {
			t.Fatal(err)
		}
		if err := AddSlip(bk, sl); err != nil {
			t.Fatal(err)
		}
		if err := CloseBook(set, bk, key, log); err != nil {
			t.Fatal(err)
		}
		return logs.String()
	}
	if out := open(); strings.Contains(out, "checkpoint") {
		t.Fatalf("a first start without a checkpoint logged: %s", out)
	}
	if _, err := os.Stat(CheckpointPath(set)); err != nil {
		t.Fatalf("no checkpoint after the stop: %v", err)
	}
	if out := open(); !strings.Contains(out, "book opened from its checkpoint") {
		t.Fatalf("the checkpoint was not used: %s", out)
	}
	data, err := os.ReadFile(CheckpointPath(set))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(CheckpointPath(set), bytes.Replace(data, []byte(`"entries":1`), []byte(`"entries":0`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := open(); !strings.Contains(out, "the book checkpoint is ignored") || !strings.Contains(out, "tag does not check") {
		t.Fatalf("a changed checkpoint was not ignored: %s", out)
	}
	// A checkpoint file longer than any checkpoint is not read whole.
	if err := os.WriteFile(CheckpointPath(set), bytes.Repeat([]byte("x"), maxCheckpoint+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := open(); !strings.Contains(out, "the book checkpoint cannot be read") || !strings.Contains(out, "longer than 4096 bytes") {
		t.Fatalf("an overlong checkpoint was not refused: %s", out)
	}
	// A checkpoint that checks but names another book's state.
	if err := os.WriteFile(set.Agent.Book, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if out := open(); !strings.Contains(out, "does not fit the book") {
		t.Fatalf("a checkpoint of another book was not ignored: %s", out)
	}
}
