package sidecar_test

import (
	"strings"
	"testing"
)

// A client that keeps exactly maxWaiting calls in flight, sending its next
// call the moment it reads an answer, is never refused with 1001: a call's
// place is free before its answer is written.
func TestExactlyMaxWaitingInFlightNoRefusal(t *testing.T) {
	const maxWaiting, total = 4, 200
	o := baseOptions()
	o.Settings = map[string]any{"maxWaiting": maxWaiting}
	h := startWith(t, "raw", o)
	h.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if got := h.recv(); !strings.Contains(got, `"result"`) {
		t.Fatalf("initialize: %s", got)
	}
	call := func(i int) {
		h.send(`{"jsonrpc":"2.0","id":` + itoa(i+1) + `,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
	}
	sent := 0
	for ; sent < maxWaiting; sent++ {
		call(sent)
	}
	for got := 0; got < total; got++ {
		line := h.recv()
		if strings.Contains(line, `"error"`) {
			t.Fatalf("answer %d of %d is an error with exactly maxWaiting in flight: %s", got+1, total, line)
		}
		if sent < total {
			call(sent)
			sent++
		}
	}
	if code := h.stop(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}
