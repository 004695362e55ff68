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

// FuzzDecodeEnvelope: a record file is read into a canonical value or
// refused; what is read marshals canonically and reads back the same.
func FuzzDecodeEnvelope(f *testing.F) {
	for _, s := range []string{`{"payload":"eyJ9","signatures":[{"protected":"x","signature":"y"}]}`, `{"a":1}`, `{"a":-1}`, `{"a":1.5}`, `[1,true]`, `{} {}`, ` {"a" : [ "b" ] } `} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := decodeEnvelope([]byte(s))
		if err != nil {
			return
		}
		b, err := canon.Marshal(v)
		if err != nil {
			return // deeper than canonical JSON allows, or not well-formed Unicode
		}
		back, err := canon.Parse(b)
		if err != nil {
			t.Fatalf("canonical bytes %s do not parse: %v", b, err)
		}
		if b2 := canon.MustMarshal(back); string(b2) != string(b) {
			t.Fatalf("round trip %s != %s", b2, b)
		}
	})
}

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
