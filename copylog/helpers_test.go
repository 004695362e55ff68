package copylog

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/receipt"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// testKey is the copy key of the tests: 32 bytes of 0x01.
var testKey = bytes.Repeat([]byte{1}, KeySize)

const testName = "executor for the files server"

// fp is the fingerprint of a text, for made-up documents.
func fp(s string) string { return canon.Fingerprint([]byte(s)) }

// at is a fixed time so that lines written by tests are the same every run.
var at = time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC)

// sentAtLine is sentLine with the stub's time when and the time of
// sending sentAt.
func sentAtLine(call string, when, sentAt time.Time) Line {
	ln := sentLine(call)
	ln.When, ln.SentAt = when, sentAt
	return ln
}

func durationOf(d time.Duration) *time.Duration { return &d }

func sentLine(call string) Line {
	return Line{
		Kind: KindSent, When: at, Call: call, Tool: "order_supplies", Action: "supplies.order",
		Amount: &record.Amount{Unit: "GBP", Value: 120}, Slip: fp("slip"), RequestID: "provared-1-" + call,
		Details: []record.Detail{
			{Name: "provared.arguments", SHA256: fp("{}")},
			{Name: "provared.tool-name", SHA256: fp("order_supplies")},
			{Name: receipt.LabelCall, SHA256: fp(call)},
			{Name: "provared.request-id", SHA256: fp("provared-1-" + call)},
		},
	}
}

func receiptLine(call, stub string) Line {
	return Line{Kind: KindReceipt, When: at, Call: call, Stub: stub, Outcome: &record.Detail{Name: receipt.LabelToolResult, SHA256: fp("result " + call)}}
}

func lateReceiptLine(call, stub string) Line {
	return Line{Kind: KindLateReceipt, When: at, Call: call, Stub: stub}
}

func notWrittenLine(call string) Line {
	return Line{Kind: KindNotWritten, When: at, Call: call, Outcome: &record.Detail{Name: receipt.LabelError, SHA256: fp("error " + call)}, Reason: "the book was changed by someone else"}
}

func denialLine(call, refusal, rules string) Line {
	return Line{Kind: KindDenial, When: at, Call: call, Tool: "order_supplies", Action: "supplies.order",
		Reason: "over-limit", Codes: []string{"over-limit"}, Slip: fp("slip"), Refusal: refusal, Rules: rules}
}

func withdrawnLine(call string) Line { return Line{Kind: KindWithdrawn, When: at, Call: call} }

// encodeLines writes lines as a copy would hold them, numbered from 1,
// under key and name, without a Log.
func encodeLines(t testing.TB, key []byte, name string, lines ...Line) []byte {
	t.Helper()
	l := &Log{key: key, name: name}
	var out []byte
	for i, ln := range lines {
		b, err := ln.body()
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		enc, err := l.tagLine(b, int64(i+1))
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		out = append(out, enc...)
	}
	return out
}

// splitLines cuts copy bytes into lines, each with its LF.
func splitLines(data []byte) [][]byte {
	parts := bytes.SplitAfter(data, []byte("\n"))
	if len(parts[len(parts)-1]) == 0 {
		parts = parts[:len(parts)-1]
	}
	return parts
}

func tempCopy(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "copy.jsonl")
}

func mustOpen(t *testing.T, path string) *Log {
	t.Helper()
	l, err := Open(path, testKey, testName)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func readBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// linesOf reads back every line of l's file (a Log keeps only its approval
// lines and unfinished calls).
func linesOf(t *testing.T, l *Log) []Line {
	t.Helper()
	lines, err := ReadFile(l.Path(), testKey, testName)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}
