package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/sidecar/approval"
)

// approveFolder writes settings naming a queue folder and returns both.
func approveFolder(t *testing.T) (config, queue string) {
	t.Helper()
	dir := t.TempDir()
	config = filepath.Join(dir, "executor.json")
	text := `{"name": "t", "server": {"command": "/bin/server"},
  "agent": {"slip": "slip.json", "book": "book.jsonl", "keys": "agent.keys", "issuerKeys": ["NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"]},
  "executor": {"keys": "executor.keys", "copy": "copy.jsonl", "copyKey": "copy.key"},
  "tools": {"write_file": {"action": "files.write", "approve": true}},
  "approvals": {"queue": "held"}}`
	if err := os.WriteFile(config, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	queue = filepath.Join(dir, "held")
	if err := os.Mkdir(queue, 0o700); err != nil {
		t.Fatal(err)
	}
	return config, queue
}

// queueRequest writes a waiting request file as the executor does.
func queueRequest(t *testing.T, queue, tool string, expiresIn time.Duration) approval.File {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Millisecond)
	r := &approval.Request{ID: canon.NewID(), Tool: tool, Action: "files.write", Amount: &record.Amount{Unit: "files", Value: 1},
		Arguments: canon.Fingerprint([]byte(`{"path":"a"}`)), RequestedAt: now, ExpiresAt: now.Add(expiresIn),
		Shown: json.RawMessage(`{"path":"a"}`)}
	f := approval.FileFor(r)
	data, err := f.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if err := approval.WriteFileAtomic(queue, approval.FileName(r.ID), data); err != nil {
		t.Fatal(err)
	}
	return f
}

// runBinary runs the built mcp-executor with stdin and returns its exit code and output.
func runBinary(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errOut.String()
}

func readQueueFile(t *testing.T, queue, id string) approval.File {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(queue, approval.FileName(id)))
	if err != nil {
		t.Fatal(err)
	}
	f, err := approval.ParseFile(data)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestApproveAsks(t *testing.T) {
	config, queue := approveFolder(t)
	first := queueRequest(t, queue, "write_file", time.Hour)
	second := queueRequest(t, queue, "delete_file", 2*time.Hour)
	third := queueRequest(t, queue, "move_file", 3*time.Hour)
	code, out, errOut := runBinary(t, "y\nno\n", "approve", "--config", config)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{`Allow the tool "write_file" (action files.write) to run once, with an amount of 1 files and arguments {"path":"a"}?`,
		"approved request " + first.ID, "declined request " + second.ID, "no more answers on standard input"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if f := readQueueFile(t, queue, first.ID); f.Approved == nil || !*f.Approved || f.AnsweredWith != approval.AnsweredWithCommand || !f.Bound(first) {
		t.Fatalf("first: %+v", f)
	}
	if f := readQueueFile(t, queue, second.ID); f.Approved == nil || *f.Approved {
		t.Fatalf("second: %+v", f)
	}
	if f := readQueueFile(t, queue, third.ID); f.Approved != nil {
		t.Fatalf("third was answered: %+v", f)
	}

	// --once answers the first still waiting, and stops.
	fourth := queueRequest(t, queue, "copy_file", 4*time.Hour)
	code, out, _ = runBinary(t, "n\ny\n", "approve", "--config", config, "--once")
	if code != ExitOK || !strings.Contains(out, "declined request "+third.ID) || strings.Contains(out, fourth.ID) {
		t.Fatalf("--once: %d\n%s", code, out)
	}
	if f := readQueueFile(t, queue, fourth.ID); f.Approved != nil {
		t.Fatalf("--once answered two: %+v", f)
	}
	code, out, _ = runBinary(t, "maybe\n", "approve", "--config", config, "--once")
	if code != ExitOK || !strings.Contains(out, "request "+fourth.ID+" still waits") {
		t.Fatalf("an unclear answer: %d\n%s", code, out)
	}
}

func TestApproveByID(t *testing.T) {
	config, queue := approveFolder(t)
	f := queueRequest(t, queue, "write_file", time.Hour)
	expired := queueRequest(t, queue, "write_file", time.Millisecond)
	if err := os.WriteFile(filepath.Join(queue, "notes.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := runBinary(t, "", "approve", "--config", config, "--json")
	var list struct {
		Queue   string `json:"queue"`
		Waiting []struct {
			ID       string `json:"id"`
			Sentence string `json:"sentence"`
		} `json:"waiting"`
	}
	if code != ExitOK || json.Unmarshal([]byte(out), &list) != nil || list.Queue != queue || len(list.Waiting) != 1 ||
		list.Waiting[0].ID != f.ID || !strings.Contains(list.Waiting[0].Sentence, "write_file") || !strings.Contains(errOut, "notes.json") {
		t.Fatalf("--json: %d\n%s\n%s", code, out, errOut)
	}

	code, out, errOut = runBinary(t, "", "approve", "--config", config, "--id", f.ID, "--no", "--json")
	var res approveOutcome
	if code != ExitOK || json.Unmarshal([]byte(out), &res) != nil || res.ID != f.ID || res.Approved {
		t.Fatalf("--id --no: %d\n%s\n%s", code, out, errOut)
	}
	if g := readQueueFile(t, queue, f.ID); g.Approved == nil || *g.Approved {
		t.Fatalf("file: %+v", g)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--id", f.ID, "--yes"}, ExitFinding, "already answered"},
		{[]string{"--id", expired.ID, "--yes"}, ExitFinding, "expired"},
		{[]string{"--id", "AAAAAAAAAAAAAAAAAAAAAA", "--yes"}, ExitFinding, "no request"},
		{[]string{"--id", f.ID}, ExitUsage, "exactly one of --yes and --no"},
		{[]string{"--id", f.ID, "--yes", "--no"}, ExitUsage, "exactly one of --yes and --no"},
		{[]string{"--yes"}, ExitUsage, "named by --id"},
		{[]string{"--id", f.ID, "--yes", "--once"}, ExitUsage, "--once"},
	} {
		code, _, errOut := runBinary(t, "", append([]string{"approve", "--config", config}, c.args...)...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d\n%s", c.args, code, errOut)
		}
	}
	if code, _, errOut := runBinary(t, "", "approve"); code != ExitUsage || !strings.Contains(errOut, "--config FILE is required") {
		t.Errorf("no config: %d %s", code, errOut)
	}
	code, out, _ = runBinary(t, "", "approve", "--config", config)
	if code != ExitOK || !strings.Contains(out, "nothing waits") {
		t.Errorf("nothing waits: %d %s", code, out)
	}
}

// TestApproveWhileHeld: a call held by a hub in this process is answered by
// the approve command in another process.
func TestApproveWhileHeld(t *testing.T) {
	config, queue := approveFolder(t)
	log, err := copylog.Open(filepath.Join(t.TempDir(), "copy.jsonl"), bytes.Repeat([]byte{3}, copylog.KeySize), "t")
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	q, err := approval.NewQueue(queue, 20*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	hub, err := approval.NewHub(approval.Options{Copy: log, Channels: []approval.Channel{q}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Close()
	type held struct {
		res approval.Result
		err error
	}
	done := make(chan held, 1)
	go func() {
		r, err := hub.Hold(context.Background(), approval.Call{CallID: "c1", Tool: "write_file", Action: "files.write",
			Slip: canon.Fingerprint([]byte("slip")), Arguments: []byte(`{"path":"a"}`), Timeout: time.Minute})
		done <- held{r, err}
	}()
	var id string
	deadline := time.Now().Add(time.Minute)
	for id == "" {
		if time.Now().After(deadline) {
			t.Fatal("the held call's request never reached the queue folder")
		}
		if files, _, _ := approval.Waiting(queue, time.Now()); len(files) == 1 {
			id = files[0].ID
		} else {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if code, out, errOut := runBinary(t, "", "approve", "--config", config, "--id", id, "--yes"); code != ExitOK {
		t.Fatalf("approve: %d\n%s\n%s", code, out, errOut)
	}
	r := <-done
	if r.err != nil || r.res.Outcome != approval.Approved || r.res.Answer.Channel != approval.ChannelCommand || !strings.HasPrefix(r.res.Answer.Who, "uid ") {
		t.Fatalf("held call: %+v %v", r.res, r.err)
	}
}
