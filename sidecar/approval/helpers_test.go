package approval

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

var copyKey = bytes.Repeat([]byte{7}, copylog.KeySize)

const copyName = "approval tests"

// world is a copy file and a queue folder that outlive one hub, as they
// outlive one run of the executor.
type world struct {
	t     *testing.T
	dir   string
	queue string
}

func newWorld(t *testing.T) *world {
	dir := t.TempDir()
	return &world{t: t, dir: dir, queue: filepath.Join(dir, "approvals")}
}

func (w *world) copyPath() string { return filepath.Join(w.dir, "copy.jsonl") }

// start opens the copy and a hub on it with the queue channel (unless
// noQueue), as the executor's start would, and closes both at the end.
func (w *world) start(o Options, noQueue bool) (*Hub, *copylog.Log) {
	w.t.Helper()
	log, err := copylog.Open(w.copyPath(), copyKey, copyName)
	if err != nil {
		w.t.Fatal(err)
	}
	if !noQueue {
		q, err := NewQueue(w.queue, 0, nil)
		if err != nil {
			w.t.Fatal(err)
		}
		o.Channels = append(o.Channels, q)
	}
	o.Copy = log
	h, err := NewHub(o, log.ApprovalLines())
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { h.Close(); log.Close() })
	return h, log
}

// stop closes the hub and copy, as a stopping executor does.
func stop(h *Hub, log *copylog.Log) {
	h.Close()
	log.Close()
}

// lines reads the copy again from its file.
func (w *world) lines() []copylog.Line {
	w.t.Helper()
	lines, err := copylog.ReadFile(w.copyPath(), copyKey, copyName)
	if err != nil {
		w.t.Fatal(err)
	}
	return lines
}

func kinds(lines []copylog.Line) []string {
	var out []string
	for _, ln := range lines {
		out = append(out, string(ln.Kind))
	}
	return out
}

// answerFile answers request id in the queue as a person's script would:
// the file read, approved set, written to a new file renamed over it.
func (w *world) answerFile(id string, approved bool) {
	w.t.Helper()
	path := filepath.Join(w.queue, FileName(id))
	data, err := os.ReadFile(path)
	if err != nil {
		w.t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		w.t.Fatal(err)
	}
	m["approved"] = approved
	out, _ := json.MarshalIndent(m, "", "  ")
	w.writeFile(id, out)
}

func (w *world) writeFile(id string, data []byte) {
	w.t.Helper()
	tmp := filepath.Join(w.queue, "edit.tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		w.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(w.queue, FileName(id))); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) fileExists(id string) bool {
	_, err := os.Stat(filepath.Join(w.queue, FileName(id)))
	return err == nil
}

var slipFP = canon.Fingerprint([]byte("slip"))

func call(id, args string) Call {
	return Call{CallID: id, Tool: "write_file", Action: "files.write", Amount: &record.Amount{Unit: "files", Value: 1},
		Slip: slipFP, Arguments: []byte(args), Timeout: time.Minute}
}

// held runs Hold in a goroutine; the result arrives on the channel.
type held struct {
	res Result
	err error
}

func hold(ctx context.Context, h *Hub, c Call) <-chan held {
	ch := make(chan held, 1)
	go func() {
		r, err := h.Hold(ctx, c)
		ch <- held{r, err}
	}()
	return ch
}

// holdOne starts a hub with the queue alone and holds c on it until its
// request is in the queue: the hub, the result to come, the request's id.
func (w *world) holdOne(c Call) (*Hub, <-chan held, string) {
	w.t.Helper()
	h, _ := w.start(Options{}, false)
	got := hold(w.t.Context(), h, c)
	synctest.Wait()
	return h, got, w.onlyRequest()
}

// onlyRequest is the id of the one request in the queue folder.
func (w *world) onlyRequest() string {
	w.t.Helper()
	files, _, err := Waiting(w.queue, time.Now())
	if err != nil || len(files) != 1 {
		w.t.Fatalf("waiting requests: %v %+v", err, files)
	}
	return files[0].ID
}

// manual is a channel a test answers by hand: it stands for a channel whose
// other end (a client, a page) the test does not run.
type manual struct {
	name string
	mu   sync.Mutex
	asks map[string]func(Answer)
	fail error
	ends map[string]error
}

func newManual(name string) *manual {
	return &manual{name: name, asks: map[string]func(Answer){}, ends: map[string]error{}}
}

func (m *manual) Name() string { return m.name }

func (m *manual) Ask(ctx context.Context, r *Request, answer func(Answer)) error {
	if m.fail != nil {
		return m.fail
	}
	m.mu.Lock()
	m.asks[r.ID] = answer
	m.mu.Unlock()
	go func() {
		<-ctx.Done()
		m.mu.Lock()
		m.ends[r.ID] = context.Cause(ctx)
		m.mu.Unlock()
	}()
	return nil
}

func (m *manual) answer(id string, yes bool) {
	m.mu.Lock()
	f := m.asks[id]
	m.mu.Unlock()
	f(Answer{Request: id, Approved: yes, Who: "someone at the " + m.name})
}
