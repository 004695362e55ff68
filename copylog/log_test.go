package copylog

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/receipt"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

var update = flag.Bool("update", false, "rewrite golden files")

// allKinds is one line of every kind, in an order a real copy could hold.
func allKinds() []Line {
	return []Line{
		{Kind: KindStart, When: at},
		sentLine("call-1"),
		receiptLine("call-1", fp("stub-1")),
		sentLine("call-2"),
		notWrittenLine("call-2"),
		denialLine("call-3", fp("refusal-3"), fp("rules")),
		withdrawnLine("call-4"),
		{Kind: KindStart, When: at.Add(time.Minute)},
		lateReceiptLine("call-2", fp("stub-2")),
		{Kind: KindDenialsFolded, When: at.Add(2 * time.Minute), Count: 41},
		// A sent line that holds the time of sending to the millisecond
		// (sentMs) beside the stub's second, and a receipt line that holds
		// the call's time with the server (serverMs); the lines above,
		// without them, are a copy written before they were kept, and
		// still read.
		sentAtLine("call-5", at.Add(3*time.Minute), at.Add(3*time.Minute+417*time.Millisecond)),
		{Kind: KindReceipt, When: at.Add(3*time.Minute + 426*time.Millisecond), Call: "call-5", Stub: fp("stub-5"),
			Outcome: &record.Detail{Name: receipt.LabelToolResult, SHA256: fp("result-5")}, Server: durationOf(5 * time.Millisecond)},
	}
}

// TestLineLayout pins the bytes of every kind of line under the test key:
// a known-answer vector for the canonical layout and the HMAC tag.
func TestLineLayout(t *testing.T) {
	checkLayout(t, "every-kind.jsonl", allKinds)
}

// checkLayout encodes the lines made under the test key, compares them
// with the golden file testdata/name (-update writes it), and reads the
// golden file back as the same lines.
func checkLayout(t *testing.T, name string, newLines func() []Line) {
	t.Helper()
	got := encodeLines(t, testKey, testName, newLines()...)
	golden := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("reading golden file (run with -update to write it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("lines differ from %s:\ngot:\n%s\nwant:\n%s", golden, got, want)
	}
	lines, err := Verify(want, testKey, testName)
	if err != nil {
		t.Fatalf("Verify(golden): %v", err)
	}
	for i, ln := range lines {
		w := newLines()[i]
		w.Seq, w.Name, w.Tag = int64(i+1), testName, ln.Tag
		if !reflect.DeepEqual(ln, w) {
			t.Errorf("line %d read back as %+v, want %+v", i+1, ln, w)
		}
	}
}

func TestAppendAndReopen(t *testing.T) {
	path := tempCopy(t)
	l := mustOpen(t, path)
	if n := len(linesOf(t, l)); n != 0 {
		t.Fatalf("a new copy has %d lines", n)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("new copy has mode %04o, want 0600", perm)
	}
	kinds := allKinds()
	if err := l.Append(kinds[:3]...); err != nil {
		t.Fatal(err)
	}
	for _, ln := range kinds[3:] {
		if err := l.Append(ln); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(withdrawnLine("late")); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close = %v, want ErrClosed", err)
	}
	if !bytes.Equal(readBytes(t, path), encodeLines(t, testKey, testName, kinds...)) {
		t.Errorf("file differs from the lines appended")
	}

	l2 := mustOpen(t, path)
	got := linesOf(t, l2)
	if len(got) != len(kinds) {
		t.Fatalf("reopened copy has %d lines, want %d", len(got), len(kinds))
	}
	for i, ln := range got {
		if ln.Seq != int64(i+1) || ln.Kind != kinds[i].Kind || ln.Name != testName {
			t.Errorf("line %d: seq %d kind %s name %q", i+1, ln.Seq, ln.Kind, ln.Name)
		}
	}
	// Appending goes on from the last number.
	if err := l2.Append(withdrawnLine("call-5")); err != nil {
		t.Fatal(err)
	}
	l2.Close()
	l3 := mustOpen(t, path)
	if last := linesOf(t, l3)[len(kinds)]; last.Seq != int64(len(kinds)+1) || last.Call != "call-5" {
		t.Errorf("appended after reopening: %+v", last)
	}
}

func TestAppendSetsTimeWhenZero(t *testing.T) {
	l := mustOpen(t, tempCopy(t))
	before := time.Now().Truncate(time.Millisecond)
	if err := l.Append(Line{Kind: KindStart}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	l2 := mustOpen(t, l.Path())
	when := linesOf(t, l2)[0].When
	if when.Before(before) || when.After(time.Now()) {
		t.Errorf("start line dated %v, appended after %v", when, before)
	}
}

func TestAppendRefusesBadLines(t *testing.T) {
	bad := sentLine("c")
	bad.Slip = "not a fingerprint"
	noOutcome := receiptLine("c", fp("s"))
	noOutcome.Outcome = nil
	otherOutcome := receiptLine("c", fp("s"))
	otherOutcome.Outcome.Name = "provared.arguments"
	tests := []struct {
		name string
		line Line
		want string
	}{
		{"unknown kind", Line{Kind: "gossip"}, `unknown kind "gossip"`},
		{"no call", withdrawnLine(""), "call is empty"},
		{"slip not a fingerprint", bad, "slip is not a fingerprint"},
		{"receipt without outcome", noOutcome, "a receipt line needs an outcome"},
		{"outcome of another name", otherOutcome, `outcome name "provared.arguments" is neither`},
		{"tool name not unicode", Line{Kind: KindDenial, Call: "c", Tool: "\xff", Action: "a", Reason: "other", Slip: fp("s")}, "not well-formed unicode"},
		{"time before 1970", Line{Kind: KindStart, When: time.Date(1969, 1, 1, 0, 0, 0, 0, time.UTC)}, "cannot be written"},
	}
	l := mustOpen(t, tempCopy(t))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := l.Append(tc.line)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Append = %v, want an error containing %q", err, tc.want)
			}
		})
	}
	// A refused line leaves the copy usable and writes nothing.
	if err := l.Append(withdrawnLine("ok")); err != nil {
		t.Fatal(err)
	}
	if got := readBytes(t, l.Path()); bytes.Count(got, []byte("\n")) != 1 {
		t.Errorf("copy holds %q", got)
	}
}

func TestUnfinished(t *testing.T) {
	path := tempCopy(t)
	l := mustOpen(t, path)
	err := l.Append(
		sentLine("done"), receiptLine("done", fp("s1")),
		sentLine("stopped"),
		sentLine("book-failed"), notWrittenLine("book-failed"),
		sentLine("recovered"), notWrittenLine("recovered"), lateReceiptLine("recovered", fp("s2")),
		withdrawnLine("never-sent"),
	)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	got := mustOpen(t, path).Unfinished()
	if len(got) != 2 {
		t.Fatalf("Unfinished = %+v, want 2 calls", got)
	}
	if got[0].Sent.Call != "stopped" || got[0].Outcome != nil || got[0].Reason != "" {
		t.Errorf("first unfinished = %+v, want call stopped with no outcome", got[0])
	}
	if got[1].Sent.Call != "book-failed" || got[1].Outcome == nil || got[1].Outcome.SHA256 != fp("error book-failed") || got[1].Reason == "" {
		t.Errorf("second unfinished = %+v, want call book-failed with its outcome", got[1])
	}
	if got[0].Sent.Slip != fp("slip") || len(got[0].Sent.Details) != 4 || !got[0].Sent.When.Equal(at) {
		t.Errorf("the sent line lost what the stub needs: %+v", got[0].Sent)
	}
}

func TestOpenRefusesACopyOthersCanRead(t *testing.T) {
	path := tempCopy(t)
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Open(path, testKey, testName)
	if err == nil || !strings.Contains(err.Error(), "others may read or write it (mode 0644)") {
		t.Errorf("Open = %v", err)
	}
}

func TestOpenArguments(t *testing.T) {
	path := tempCopy(t)
	tests := []struct {
		name     string
		key      []byte
		exName   string
		sentinel error
		want     string
	}{
		{"no key, no copy", nil, testName, ErrKeyMissing, "opening copy " + path + ": no copy key given: copy key missing"},
		{"short key", []byte("short"), testName, nil, "opening copy " + path + ": the copy key is 5 bytes, not 32"},
		{"no name", testKey, "", nil, "opening copy: no executor name given"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Open(path, tc.key, tc.exName)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("Open = %v, want %q", err, tc.want)
			}
			if tc.sentinel != nil && !errors.Is(err, tc.sentinel) {
				t.Errorf("error does not wrap %v", tc.sentinel)
			}
		})
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused Open made the file: %v", err)
	}
}

// TestOpenSyncsTheFolderOfAnEmptyCopy checks that the copy's name is made
// durable before any line is: also when the file is already there but empty,
// as an Open stopped between creating it and syncing its folder leaves it.
// A sync leaves no trace to look at, so syncDir is watched.
func TestOpenSyncsTheFolderOfAnEmptyCopy(t *testing.T) {
	realSyncDir := syncDir
	t.Cleanup(func() { syncDir = realSyncDir })
	for _, tc := range []struct {
		name    string
		prepare func(path string)
	}{
		{"created by Open", func(string) {}},
		{"left empty by a stopped Open", func(path string) {
			if err := os.WriteFile(path, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "copy.jsonl")
			tc.prepare(path)
			var synced []string
			syncDir = func(d string) error {
				synced = append(synced, d)
				return realSyncDir(d)
			}
			l, err := Open(path, testKey, testName)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			if len(synced) != 1 || synced[0] != dir {
				t.Errorf("folders synced at Open: %v, want [%s]", synced, dir)
			}
		})
	}
}
