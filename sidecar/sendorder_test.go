package sidecar_test

import (
	"strconv"
	"strings"
	"testing"
)

// Calls taken together reach the server in the order their stubs enter the
// book (the order the client sent them), though their copy lines are
// written together.
func TestCallsAreSentInBookOrder(t *testing.T) {
	t.Parallel()
	o := baseOptions()
	o.Settings = map[string]any{"maxWaiting": 200}
	h := startWith(t, "raw", o)
	const n = 150
	var burst strings.Builder
	for i := 1; i <= n; i++ {
		burst.WriteString(`{"jsonrpc":"2.0","id":` + itoa(i) + `,"method":"tools/call","params":{"name":"echo","arguments":{}}}` + "\n")
	}
	h.send(strings.TrimSuffix(burst.String(), "\n"))
	for i := 1; i <= n; i++ {
		h.recv()
	}
	h.stop()
	// The executor's ids number the calls in the order they were taken.
	var got []int
	for _, m := range serverLines(t, h.record) {
		if m["method"] != "tools/call" {
			continue
		}
		id, _ := m["id"].(string)
		parts := strings.SplitN(id, "-", 3)
		if len(parts) != 3 {
			t.Fatalf("id %q", id)
		}
		k, err := strconv.Atoi(parts[1])
		if err != nil {
			t.Fatalf("id %q", id)
		}
		got = append(got, k)
	}
	if len(got) != n {
		t.Fatalf("the server read %d calls, want %d", len(got), n)
	}
	for i := 1; i < len(got); i++ {
		if got[i] < got[i-1] {
			t.Fatalf("call %d reached the server after call %d: %v", got[i-1], got[i], got)
		}
	}
	stubs := entriesOf(readBook(t, h.env.BookPath), "stub")
	if len(stubs) != n {
		t.Fatalf("%d stubs", len(stubs))
	}
}
