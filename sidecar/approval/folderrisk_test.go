package approval

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFolderRisk: a queue folder only its owner, the executor's user, can
// write is fine; one its group or others may write, or one another user
// owns, is named with what is wrong.
func TestFolderRisk(t *testing.T) {
	for _, tc := range []struct {
		perm        os.FileMode
		owner, self int
		want        []string // "" in want: no risk
	}{
		{0o700, 1000, 1000, nil},
		{0o755, 1000, 1000, nil},
		{0o500, 0, 0, nil},
		{0o770, 1000, 1000, []string{"group or others may write it (mode 0770)"}},
		{0o777, 1000, 1000, []string{"mode 0777"}},
		{0o702, 1000, 1000, []string{"mode 0702"}},
		{0o700, 0, 1000, []string{"belongs to user 0, not to the executor's user 1000"}},
		{0o775, 33, 1000, []string{"mode 0775", ", and it belongs to user 33"}},
	} {
		got := folderRisk(tc.perm, tc.owner, tc.self)
		if (got == "") != (tc.want == nil) {
			t.Errorf("mode %04o, owner %d, self %d: %q", tc.perm, tc.owner, tc.self, got)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) || !strings.Contains(got, "whoever can write it can approve a held call") {
				t.Errorf("mode %04o, owner %d, self %d: %q lacks %q", tc.perm, tc.owner, tc.self, got, w)
			}
		}
	}
}

// TestNewQueueWarnsOfAnOpenFolder: a queue folder others may write is
// warned about when the queue opens, naming the folder and the fix; one
// the queue makes is 0700 and not warned about.
func TestNewQueueWarnsOfAnOpenFolder(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	made := filepath.Join(t.TempDir(), "queue")
	if _, err := NewQueue(made, 0, log); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(made); err != nil || st.Mode().Perm() != 0o700 || logs.Len() != 0 {
		t.Fatalf("the queue made its folder with mode %v (%v) and logged %s", st.Mode().Perm(), err, logs.String())
	}
	open := t.TempDir()
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := NewQueue(open, 0, log); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"level":"WARN"`, "mode 0777", `"queue":"` + open, "chmod 0700 " + open} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log lacks %q: %s", want, logs.String())
		}
	}
}
