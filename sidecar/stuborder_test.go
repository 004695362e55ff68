package sidecar_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/copylog"
)

// Calls in flight together are signed at the same time, but their stubs
// enter the book in the order the calls were taken (their places were
// reserved), whatever order they end in: each stub's seq is the one after
// the stub before it and its previous is that stub's fingerprint, and the
// book checks intact. Here the later calls end first.
func TestStubsSignedTogetherKeepTheBookOrder(t *testing.T) {
	t.Parallel()
	o := baseOptions()
	o.Settings = map[string]any{"maxWaiting": 64}
	h := startWith(t, "sdk", o)
	h.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	h.recv()
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	const n = 30
	var burst strings.Builder
	for i := 1; i <= n; i++ {
		burst.WriteString(`{"jsonrpc":"2.0","id":` + itoa(i) + `,"method":"tools/call","params":{"name":"slow","arguments":{"ms":` +
			itoa((n-i)*4) + `}}}` + "\n")
	}
	h.send(strings.TrimSuffix(burst.String(), "\n"))
	for i := 1; i <= n; i++ {
		h.recv()
	}
	if code := h.stop(); code != 0 {
		t.Fatalf("the executor exited %d", code)
	}
	h.checkBook()

	// The calls in the order they were taken: the executor's ids number them.
	var calls []string
	for _, ln := range readCopy(t, h.env.CopyPath, h.env.CopyKey, "test executor") {
		if ln.Kind == copylog.KindSent {
			calls = append(calls, ln.Call)
		}
	}
	taken := func(id string) int {
		parts := strings.SplitN(id, "-", 3)
		k, err := strconv.Atoi(parts[1])
		if len(parts) != 3 || err != nil {
			t.Fatalf("call id %q", id)
		}
		return k
	}
	slices.SortFunc(calls, func(a, b string) int { return taken(a) - taken(b) })
	stubs := entriesOf(readBook(t, h.env.BookPath), "stub")
	if len(stubs) != n || len(calls) != n {
		t.Fatalf("%d stubs for %d calls sent, want %d", len(stubs), len(calls), n)
	}
	for i, s := range stubs {
		if got := detailsOf(s.Content)["executor.call"]; got != fp(calls[i]) {
			t.Fatalf("stub %d is not the stub of call %s, the %d-th taken", i+1, calls[i], i+1)
		}
		if i == 0 {
			continue
		}
		prev := stubs[i-1]
		if s.Content["seq"].(float64) != prev.Content["seq"].(float64)+1 || s.Content["previous"] != prev.Fingerprint {
			t.Fatalf("stub %d: seq %v previous %v, after seq %v fingerprint %s", i+1, s.Content["seq"], s.Content["previous"],
				prev.Content["seq"], prev.Fingerprint)
		}
		if s.Countersignature["stub"] != s.Fingerprint {
			t.Fatalf("stub %d: its countersignature names %v", i+1, s.Countersignature["stub"])
		}
	}
}
