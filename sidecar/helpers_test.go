package sidecar_test

import (
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
)

// syncbuf.Buffer collects the executor's stderr from several goroutines.

// bookEntry is one book line: its kind and the decoded content of its
// main record.
type bookEntry struct {
	Kind             string
	Content          map[string]any
	Fingerprint      string
	Countersignature map[string]any
}

// readBook decodes every line of a book.
func readBook(t *testing.T, path string) []bookEntry {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []bookEntry
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line == "" {
			continue
		}
		var m map[string]struct {
			Payload string `json:"payload"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("book line: %v", err)
		}
		for _, kind := range []string{"slip", "stub", "refusal"} {
			r, ok := m[kind]
			if !ok {
				continue
			}
			e := bookEntry{Kind: kind, Content: decodePayload(t, r.Payload)}
			raw, _ := canon.UnB64(r.Payload)
			e.Fingerprint = canon.Fingerprint(raw)
			if cs, ok := m["countersignature"]; ok {
				e.Countersignature = decodePayload(t, cs.Payload)
			}
			out = append(out, e)
		}
	}
	return out
}

func decodePayload(t *testing.T, p string) map[string]any {
	t.Helper()
	raw, err := canon.UnB64(p)
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func entriesOf(es []bookEntry, kind string) []bookEntry {
	var out []bookEntry
	for _, e := range es {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// detailsOf maps a stub's details by label.
func detailsOf(stub map[string]any) map[string]string {
	out := map[string]string{}
	list, _ := stub["details"].([]any)
	for _, d := range list {
		m := d.(map[string]any)
		out[m["name"].(string)] = m["sha256"].(string)
	}
	return out
}

// readCopy reads the executor's copy with its key.
func readCopy(t *testing.T, path string, key []byte, name string) []copylog.Line {
	t.Helper()
	lines, err := copylog.ReadFile(path, key, name)
	if err != nil {
		t.Fatal(err)
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

func fp(s string) string { return canon.Fingerprint([]byte(s)) }

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type nopReadCloser struct{ io.Reader }

func (nopReadCloser) Close() error { return nil }
