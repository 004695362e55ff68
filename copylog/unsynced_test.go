package copylog

import (
	"errors"
	"strings"
	"testing"
)

// TestAppendUnsynced: a receipt line appended unsynced is written at once
// (a reader sees it, in order) but not synced; the next Append's sync
// covers it, and Close syncs what is still unsynced. A failed sync at
// Close is reported.
func TestAppendUnsynced(t *testing.T) {
	steps := []struct {
		do        func(l *Log) error
		wantSyncs int
		wantLines int
	}{
		{func(l *Log) error { return l.Append(sentLine("c1")) }, 1, 1},
		{func(l *Log) error { return l.AppendUnsynced(receiptLine("c1", fp("s1"))) }, 1, 2},
		{func(l *Log) error { return l.AppendUnsynced(receiptLine("c1", fp("s2"))) }, 1, 3},
		{func(l *Log) error { return l.Append(sentLine("c2")) }, 2, 4},
		{func(l *Log) error { return l.AppendUnsynced(receiptLine("c2", fp("s3"))) }, 2, 5},
		{func(l *Log) error { return l.Close() }, 3, 5},
	}
	path := tempCopy(t)
	l := mustOpen(t, path)
	syncs := 0
	realSync := l.syncFile
	l.syncFile = func() error { syncs++; return realSync() }
	for i, st := range steps {
		if err := st.do(l); err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
		if syncs != st.wantSyncs {
			t.Fatalf("step %d: %d syncs, want %d", i+1, syncs, st.wantSyncs)
		}
		lines, err := ReadFile(path, testKey, testName)
		if err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
		if len(lines) != st.wantLines {
			t.Fatalf("step %d: %d lines on the disk, want %d", i+1, len(lines), st.wantLines)
		}
	}
	lines, _ := ReadFile(path, testKey, testName)
	kinds := []string{}
	for _, ln := range lines {
		kinds = append(kinds, string(ln.Kind))
	}
	if got := strings.Join(kinds, ","); got != "sent,receipt,receipt,sent,receipt" {
		t.Fatalf("the lines are %s", got)
	}
}

// TestCloseReportsAFailedSyncOfUnsyncedLines: Close of a copy holding
// unsynced lines syncs them, and says so when that fails; a copy with
// nothing unsynced does not sync at Close.
func TestCloseReportsAFailedSyncOfUnsyncedLines(t *testing.T) {
	for _, unsynced := range []bool{true, false} {
		l := mustOpen(t, tempCopy(t))
		if err := l.Append(sentLine("c1")); err != nil {
			t.Fatal(err)
		}
		if unsynced {
			if err := l.AppendUnsynced(receiptLine("c1", fp("s1"))); err != nil {
				t.Fatal(err)
			}
		}
		l.syncFile = func() error { return errors.New("the disk is gone") }
		err := l.Close()
		if unsynced && (err == nil || !strings.Contains(err.Error(), "syncing copy") || !strings.Contains(err.Error(), "the disk is gone")) {
			t.Fatalf("close with unsynced lines and a failing sync: %v", err)
		}
		if !unsynced && err != nil {
			t.Fatalf("close with nothing unsynced synced anyway: %v", err)
		}
	}
}
