package approval

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A kept approval is read as every queue file is: a symbolic link, a FIFO
// (which would block the start), a second hard link and an oversized file
// are refused; a missing file says so.
func TestReadQueueFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "call.approval.json")
	if err := os.WriteFile(good, []byte(`{"approval":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadQueueFile(good); err != nil || string(data) != `{"approval":{}}` {
		t.Fatalf("a kept file: %q, %v", data, err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "hard.json")
	if err := os.Link(good, hard); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, []byte(strings.Repeat(" ", MaxFileSize+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{link, hard, fifo, big} {
		if _, err := ReadQueueFile(p); err == nil {
			t.Errorf("%s was read", filepath.Base(p))
		}
	}
	if _, err := ReadQueueFile(filepath.Join(dir, "missing.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}
