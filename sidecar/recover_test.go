package sidecar_test

import (
	"strings"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/receipt"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// writeUnfinished puts a sent line with no receipt into the copy, as a stop
// while the call was with the server leaves it; with outcome, also the
// not-written line a book that could not be written leaves.
func writeUnfinished(t *testing.T, env *devsetup.Env, slipFP, call string, sentAt time.Time, outcome *record.Detail) {
	t.Helper()
	log, err := copylog.Open(env.CopyPath, env.CopyKey, "test executor")
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	sent := copylog.Line{Kind: copylog.KindSent, When: sentAt, Call: call, Tool: "order", Action: "supplies.order",
		Amount: &record.Amount{Unit: "GBP", Value: 12}, Slip: slipFP, RequestID: call,
		Details: []record.Detail{
			{Name: receipt.LabelArguments, SHA256: fp(`{"total":12}`)},
			{Name: receipt.LabelToolName, SHA256: fp("order")},
			{Name: receipt.LabelCall, SHA256: fp(call)},
			{Name: receipt.LabelRequestID, SHA256: fp(call)},
		}}
	if err := log.Append(sent); err != nil {
		t.Fatal(err)
	}
	if outcome != nil {
		if err := log.Append(copylog.Line{Kind: copylog.KindNotWritten, Call: call, Outcome: outcome, Reason: "the disk was full"}); err != nil {
			t.Fatal(err)
		}
	}
}

// A call the executor was sending when it stopped gets its receipt at the
// next start, from the copy: dated when it was sent, naming provared.error
// (or the outcome the copy holds) and executor.written-late, countersigned
// now. It is never sent again.
func TestRecoveryWritesLateReceipts(t *testing.T) {
	t.Parallel()
	resultFP := fp(`{"content":[]}`)
	for _, tc := range []struct {
		name    string
		outcome *record.Detail
		want    [2]string
	}{
		{"stopped while with the server", nil, [2]string{receipt.LabelError, fp(receipt.TextStoppedWhileSent)}},
		{"book could not be written", &record.Detail{Name: receipt.LabelToolResult, SHA256: resultFP}, [2]string{receipt.LabelToolResult, resultFP}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o, record := serverOpts(t, "sdk", baseOptions())
			env, err := devsetup.Build(o)
			if err != nil {
				t.Fatal(err)
			}
			sentAt := time.Now().Add(-90 * time.Second).UTC().Truncate(time.Second)
			call := "provared-1-recovered"
			writeUnfinished(t, env, env.Slip.Fingerprint, call, sentAt, tc.outcome)

			h := launch(t, env)
			h.record = record
			if code := h.stop(); code != 0 {
				t.Fatalf("exit code %d", code)
			}
			if got := receivedCalls(t, record); len(got) != 0 {
				t.Errorf("the call was sent again: %v", got)
			}
			h.checkBook()
			stubs := entriesOf(readBook(t, env.BookPath), "stub")
			if len(stubs) != 1 {
				t.Fatalf("%d stubs", len(stubs))
			}
			s := stubs[0]
			d := detailsOf(s.Content)
			if d[tc.want[0]] != tc.want[1] {
				t.Errorf("outcome %v, want %v", d, tc.want)
			}
			if d[receipt.LabelWrittenLate] != fp(receipt.TextWrittenLate) || d[receipt.LabelCall] != fp(call) {
				t.Errorf("details %v", d)
			}
			if s.Content["when"] != canon.FormatTime(sentAt) {
				t.Errorf("stub when %v, sent %s", s.Content["when"], canon.FormatTime(sentAt))
			}
			csWhen, _ := canon.ParseTime(s.Countersignature["when"].(string))
			if !csWhen.After(sentAt) {
				t.Errorf("countersignature dated %v, not after the sending time", csWhen)
			}
			lines := readCopy(t, env.CopyPath, env.CopyKey, "test executor")
			if k := copyKinds(lines); k[copylog.KindLateReceipt] != 1 {
				t.Errorf("copy kinds %v", k)
			}
			if u := copylog.UnfinishedCalls(lines); len(u) != 0 {
				t.Errorf("still unfinished: %v", u)
			}

			// A second start writes nothing more.
			h2 := launch(t, env)
			if code := h2.stop(); code != 0 {
				t.Errorf("the second start exited with %d", code)
			}
			if n := len(entriesOf(readBook(t, env.BookPath), "stub")); n != 1 {
				t.Errorf("%d stubs after a second start", n)
			}
		})
	}
}

// A call sent under another slip stops the start, with the instruction to
// put that slip back for one start.
func TestRecoveryUnderAnotherSlipStopsTheStart(t *testing.T) {
	t.Parallel()
	o, _ := serverOpts(t, "sdk", baseOptions())
	env, err := devsetup.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	writeUnfinished(t, env, fp("another slip"), "provared-1-other", time.Now().Add(-time.Minute), nil)
	h := launch(t, env)
	if code := h.exitCode(); code == 0 {
		t.Fatalf("the executor started")
	}
	if !strings.Contains(h.stderr.String(), "put that slip back") {
		t.Errorf("stderr does not say to put the slip back:\n%s", h.stderr.String())
	}
}
