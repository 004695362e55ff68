package sidecar_test

import (
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
)

// A client that keeps exactly maxWaiting calls in flight, sending its next
// call the moment it reads an answer, is never refused with 1001: a call's
// place is free before its answer is written.
func TestExactlyMaxWaitingInFlightNoRefusal(t *testing.T) {
	t.Parallel()
	const maxWaiting, total = settings.DefaultMaxWaiting, 400 // the default, as the issue measured it
	h := startWith(t, "raw", baseOptions())
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

// The bytes of calls in flight are bounded: with maxBytesWaiting at 1 MiB, a 600 KB call in flight
// leaves no room for a second one, which gets 1001 and reaches neither the copy nor the server; once
// the first has ended a third goes through.
func TestMaxBytesWaiting(t *testing.T) {
	o := baseOptions()
	o.Settings = map[string]any{"maxBytesWaiting": 1 << 20}
	h := startWith(t, "sdk", o)
	h.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if got := h.recv(); !strings.Contains(got, `"result"`) {
		t.Fatalf("initialize: %s", got)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	pad := strings.Repeat("p", 600<<10)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"MS":1000,"pad":"` + pad + `"}}}`)
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"pad":"` + pad + `"}}}`)
	if got := h.recv(); !strings.Contains(got, `"id":2`) || !strings.Contains(got, `"code":1001`) || !strings.Contains(got, "maxBytesWaiting") {
		t.Fatalf("the call past maxBytesWaiting got %.300s", got)
	}
	if got := h.recv(); !strings.Contains(got, `"id":1`) || !strings.Contains(got, "slept") {
		t.Fatalf("the call in flight got %.300s", got)
	}
	h.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"pad":"` + pad + `"}}}`)
	if got := h.recv(); !strings.Contains(got, `"id":3`) || !strings.Contains(got, `"result"`) {
		t.Fatalf("the call after the first ended got %.300s", got)
	}
	if code := h.stop(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if calls := receivedCalls(t, h.record); strings.Join(calls, ",") != "slow,echo" {
		t.Fatalf("the server received %v; the refused call must not reach it", calls)
	}
	sent := 0
	for _, l := range readCopy(t, h.env.CopyPath, h.env.CopyKey, "test executor") {
		if l.Kind == copylog.KindSent {
			sent++
		}
	}
	if sent != 2 {
		t.Fatalf("%d sent lines in the copy, want 2: the refused call must not be written", sent)
	}
}
