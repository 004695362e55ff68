package robustness_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
)

// Labels and fixed texts of the stubs' details, as the seed and the
// README name them.
const (
	labelCall        = "executor.call"
	labelToolResult  = "provared.tool-result"
	labelError       = "provared.error"
	labelWrittenLate = "executor.written-late"

	textStoppedWhileSent   = "The executor stopped after recording this call as sent; whether the tool server got it, and its outcome, are not known."
	textResultNotCanonical = "The tool server's result cannot be written in the one form of RFC 8785, so it is not bound."
	textAnswerUnreadable   = "The tool server's answer could not be read as a message, so it is not bound."
	textTimeout            = "no answer: the time for the tool server to answer ran out"
	textServerEnded        = "no answer: the tool server ended"
)

func fp(s string) string { return canon.Fingerprint([]byte(s)) }

// entry is one record of the book: its kind ("slip", "stub", "refusal"),
// the line it is on (from 1), its decoded content and fingerprint.
type entry struct {
	Kind        string
	Line        int
	Content     map[string]any
	Fingerprint string
}

// details maps a stub's details by label.
func (e entry) details() map[string]string {
	out := map[string]string{}
	list, _ := e.Content["details"].([]any)
	for _, d := range list {
		m, _ := d.(map[string]any)
		name, _ := m["name"].(string)
		sha, _ := m["sha256"].(string)
		out[name] = sha
	}
	return out
}

// readBook decodes every line of the book.
func readBook(t *testing.T, path string) []entry {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []entry
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var m map[string]struct {
			Payload string `json:"payload"`
		}
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("book line %d: %v", i+1, err)
		}
		for _, kind := range []string{"slip", "stub", "refusal"} {
			r, ok := m[kind]
			if !ok {
				continue
			}
			raw, err := canon.UnB64(r.Payload)
			if err != nil {
				t.Fatalf("book line %d: %v", i+1, err)
			}
			var c map[string]any
			if err := json.Unmarshal(raw, &c); err != nil {
				t.Fatalf("book line %d: %v", i+1, err)
			}
			out = append(out, entry{Kind: kind, Line: i + 1, Content: c, Fingerprint: canon.Fingerprint(raw)})
		}
	}
	return out
}

func only(es []entry, kind string) []entry {
	var out []entry
	for _, e := range es {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// stubsFor returns the book's stubs that name the executor's call id.
func stubsFor(es []entry, callID string) []entry {
	var out []entry
	for _, e := range only(es, "stub") {
		if e.details()[labelCall] == fp(callID) {
			out = append(out, e)
		}
	}
	return out
}

// received is one tools/call the server read: the id it was sent under and
// the tool's name.
type received struct{ ID, Tool string }

// serverCalls lists the tools/call requests in a server's record.
func serverCalls(t *testing.T, record string) []received {
	t.Helper()
	data, err := os.ReadFile(record)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []received
	for _, line := range bytes.Split(data, []byte("\n")) {
		var m struct {
			ID     any    `json:"id"`
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &m) != nil || m.Method != "tools/call" {
			continue
		}
		id, _ := m.ID.(string)
		out = append(out, received{ID: id, Tool: m.Params.Name})
	}
	return out
}

// serverMetaCallIDs lists, for each tools/call the server read, its id and
// the red.prova/call-id in its _meta.
func serverMetaCallIDs(t *testing.T, record string) [][2]string {
	t.Helper()
	data, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	var out [][2]string
	for _, line := range bytes.Split(data, []byte("\n")) {
		var m struct {
			ID     string `json:"id"`
			Method string `json:"method"`
			Params struct {
				Meta map[string]any `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &m) != nil || m.Method != "tools/call" {
			continue
		}
		c, _ := m.Params.Meta["red.prova/call-id"].(string)
		out = append(out, [2]string{m.ID, c})
	}
	return out
}

// serverRead reports whether the server's record holds the text anywhere.
func serverRead(t *testing.T, record, text string) bool {
	t.Helper()
	data, err := os.ReadFile(record)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return bytes.Contains(data, []byte(text))
}

// readCopy reads the executor's copy under its key.
// readCopy reads the copy's lines; a last line a kill cut in the middle of
// its write (never acknowledged) is left out, as the executor's next start
// sets it aside (copylog.RepairTornLine), and the file is not changed.
func readCopy(t *testing.T, env *devsetup.Env) []copylog.Line {
	t.Helper()
	lines, err := copylog.ReadFile(env.CopyPath, env.CopyKey, "test executor")
	if errors.Is(err, copylog.ErrCutLine) {
		data, rerr := os.ReadFile(env.CopyPath)
		if rerr != nil {
			t.Fatal(rerr)
		}
		t.Logf("the copy's last line was cut by the kill: %d bytes left out", len(data)-bytes.LastIndexByte(data, '\n')-1)
		lines, err = copylog.Verify(data[:bytes.LastIndexByte(data, '\n')+1], env.CopyKey, "test executor")
	}
	if err != nil {
		t.Fatalf("reading the copy: %v", err)
	}
	return lines
}

func copyKinds(lines []copylog.Line) map[copylog.Kind]int {
	out := map[copylog.Kind]int{}
	for _, l := range lines {
		out[l.Kind]++
	}
	return out
}

// checkRecords is what every case ends with: `verify` says the book is
// intact, `compare` exits 0, and every call the server received has exactly
// one receipt (none has two). It returns the book's entries.
func checkRecords(t *testing.T, env *devsetup.Env, record string) []entry {
	t.Helper()
	if code, out := compare(t, env); code != 0 {
		t.Errorf("compare exit %d, want 0:\n%s", code, out)
	}
	return checkBookAndReceipts(t, env, record)
}

// checkBookAndReceipts is checkRecords without compare.
func checkBookAndReceipts(t *testing.T, env *devsetup.Env, record string) []entry {
	t.Helper()
	if code, out := verifyBook(t, env); code != 0 || !strings.Contains(out, "intact") || strings.Contains(out, "NOT intact") {
		t.Errorf("verify exit %d, want 0 and intact:\n%s", code, out)
	}
	es := readBook(t, env.BookPath)
	seen := map[string]int{}
	for _, s := range only(es, "stub") {
		if c := s.details()[labelCall]; c != "" {
			seen[c]++
		}
	}
	for c, n := range seen {
		if n > 1 {
			t.Errorf("the call with executor.call %s has %d receipts in the book", c, n)
		}
	}
	for _, r := range serverCalls(t, record) {
		if r.ID == "" {
			t.Errorf("the server received a tools/call (%s) under an id that is not the executor's", r.Tool)
			continue
		}
		if n := seen[fp(r.ID)]; n != 1 {
			t.Errorf("the server received call %s (%s); the book holds %d receipts for it, want exactly 1", r.ID, r.Tool, n)
		}
	}
	return es
}
