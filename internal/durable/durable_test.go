package durable

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteFile: the file is replaced whole with mode 0600 and no
// temporary file is left; a folder that is not there is named.
func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state")
	for _, text := range []string{"first\n", "second, longer\n", ""} {
		if err := WriteFile(path, []byte(text)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != text {
			t.Fatalf("read %q (%v), want %q", got, err, text)
		}
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("mode %v (%v), want 0600", fi.Mode().Perm(), err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("the folder holds %v (%v), want only the file", entries, err)
	}
	missing := filepath.Join(dir, "no such folder", "state")
	if err := WriteFile(missing, []byte("x")); err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("writing into a folder that does not exist: %v", err)
	}
}

// TestSyncDir: a folder syncs; one that is not there is named in the error.
func TestSyncDir(t *testing.T) {
	if err := SyncDir(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "gone")
	if err := SyncDir(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("SyncDir of a missing folder: %v", err)
	}
}
