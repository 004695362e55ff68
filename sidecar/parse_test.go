package sidecar

import (
	"context"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/receipt"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// TestStubsByCall: the book's stubs are found by the fingerprint of the call id each names, lines of
// other kinds passed over.
func TestStubsByCall(t *testing.T) {
	e, err := devsetup.Build(devsetup.Options{Dir: t.TempDir(), Command: "/bin/true",
		Tools: map[string]devsetup.Tool{"echo": {Action: "provared.data.read"}}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := book.OpenBook(e.BookPath, book.Options{IssuerKeys: []string{e.Thumbprint}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Append(book.Line{Slip: e.Slip.Record}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	prev := ""
	for i, call := range []string{"provared-1-a", "provared-2-b"} {
		when := time.Now().UTC().Truncate(time.Second)
		f := receipt.StubFields{Slip: e.Slip.Fingerprint, Seq: int64(i), Previous: prev, Action: "provared.data.read", With: "executor",
			Details: []record.Detail{record.TextDetail(receipt.LabelToolName, "echo"), record.TextDetail(receipt.LabelCall, call)}, When: when}
		line, err := f.Sign(context.Background(), e.Agent, e.Executor, when)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Append(line); err != nil {
			t.Fatal(err)
		}
		prev = line.Stub.Fingerprint
		want[canon.Fingerprint([]byte(call))] = prev
	}
	got, err := stubsByCall(e.BookPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("call %s: stub %q, want %q", k, got[k], v)
		}
	}
}
