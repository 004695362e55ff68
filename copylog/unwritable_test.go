package copylog

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// checkBroken asserts what a failed write must leave: the error wraps
// ErrUnwritable, the file holds exactly what it held before, and every later
// Append fails the same way.
func checkBroken(t *testing.T, l *Log, err error, before []byte) {
	t.Helper()
	if !errors.Is(err, ErrUnwritable) {
		t.Fatalf("Append = %v, want ErrUnwritable", err)
	}
	if got := readBytes(t, l.Path()); !bytes.Equal(got, before) {
		t.Errorf("the failed write was not cut back: %d bytes, want %d", len(got), len(before))
	}
	if !errors.Is(l.Err(), ErrUnwritable) {
		t.Errorf("Err() = %v after a failed write", l.Err())
	}
	if err := l.Append(withdrawnLine("after")); !errors.Is(err, ErrUnwritable) {
		t.Errorf("Append after the failure = %v, want ErrUnwritable", err)
	}
	if got := readBytes(t, l.Path()); !bytes.Equal(got, before) {
		t.Error("a broken log wrote again")
	}
	if _, err := Verify(before, testKey, testName); err != nil {
		t.Errorf("the copy left behind does not verify: %v", err)
	}
}

// TestAppendFailsOnAFullDisk fills a real 64 KiB tmpfs. It needs to mount
// one (root, or CAP_SYS_ADMIN); where mounting is not allowed it makes the
// same failure through the package's write seam, ENOSPC after part of the
// bytes, and says so in the log.
func TestAppendFailsOnAFullDisk(t *testing.T) {
	dir := t.TempDir()
	mounted := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", dir).Run() == nil
	if mounted {
		t.Cleanup(func() {
			if err := exec.Command("umount", dir).Run(); err != nil {
				t.Errorf("umount %s: %v", dir, err)
			}
		})
		t.Log("writing to a real 64 KiB tmpfs")
	} else {
		t.Log("cannot mount a tmpfs here: the full disk is made through the write seam (a partial write, then ENOSPC)")
	}
	l := mustOpen(t, filepath.Join(dir, "copy.jsonl"))
	if !mounted {
		budget := 64 << 10
		realWrite := l.writeFile
		l.writeFile = func(b []byte) (int, error) {
			if len(b) <= budget {
				budget -= len(b)
				return realWrite(b)
			}
			n, _ := realWrite(b[:budget])
			budget = 0
			return n, syscall.ENOSPC
		}
	}
	var err error
	var before []byte
	for i := 0; i < 1000 && err == nil; i++ {
		before = readBytes(t, l.Path())
		err = l.Append(sentLine("call"), receiptLine("call", fp("stub")))
	}
	if err == nil {
		t.Fatal("1000 calls fit in 64 KiB")
	}
	t.Logf("the write failed with: %v", err)
	checkBroken(t, l, err, before)
}

func TestAppendFailsThroughTheSeam(t *testing.T) {
	// The write seam stands in for faults a real disk gives only by chance:
	// an error from write, a short write with no error, a failed fdatasync.
	tests := []struct {
		name  string
		write func(next func([]byte) (int, error)) func([]byte) (int, error)
		sync  func(next func() error) func() error
		want  string
	}{
		{
			name: "write fails",
			write: func(next func([]byte) (int, error)) func([]byte) (int, error) {
				return func(b []byte) (int, error) { return 0, syscall.EIO }
			},
			want: "input/output error",
		},
		{
			name: "short write",
			write: func(next func([]byte) (int, error)) func([]byte) (int, error) {
				return func(b []byte) (int, error) { return next(b[:len(b)/2]) }
			},
			want: "short write",
		},
		{
			name: "fdatasync fails",
			sync: func(next func() error) func() error {
				failed := false
				return func() error {
					if !failed {
						failed = true
						return unix.EIO
					}
					return next()
				}
			},
			want: "input/output error",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := mustOpen(t, tempCopy(t))
			if err := l.Append(Line{Kind: KindStart, When: at}); err != nil {
				t.Fatal(err)
			}
			before := readBytes(t, l.Path())
			if tc.write != nil {
				l.writeFile = tc.write(l.writeFile)
			}
			if tc.sync != nil {
				l.syncFile = tc.sync(l.syncFile)
			}
			err := l.Append(sentLine("c"))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "copy cannot be written") {
				t.Fatalf("Append = %v, want an unwritable error with %q", err, tc.want)
			}
			checkBroken(t, l, err, before)
			// The next start finds a sound copy.
			l.Close()
			if n := len(linesOf(t, mustOpen(t, l.Path()))); n != 1 {
				t.Errorf("reopened copy has %d lines, want 1", n)
			}
		})
	}
}

// TestFailedWriteFailsEveryWaiter shows that callers batched into a write
// that fails all get the error, none a success.
func TestFailedWriteFailsEveryWaiter(t *testing.T) {
	l := mustOpen(t, tempCopy(t))
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	l.writeFile = func(b []byte) (int, error) {
		entered <- struct{}{}
		<-release
		return 0, syscall.EIO
	}
	results := make(chan error, 5)
	go func() { results <- l.Append(withdrawnLine("first")) }()
	<-entered // the first call is writing; the next ones queue behind it
	for i := range 4 {
		go func() { results <- l.Append(withdrawnLine(string(rune('a' + i)))) }()
	}
	// Wait until the four are queued, then let the write fail.
	deadline := time.Now().Add(10 * time.Second)
	for {
		l.mu.Lock()
		n := l.w.Waiting()
		l.mu.Unlock()
		if n == 4 {
			break
		}
		if time.Now().After(deadline) {
			close(release)
			t.Fatalf("%d of 4 appends queued behind the first after 10s", n)
		}
		runtime.Gosched()
	}
	close(release)
	for range 5 {
		if err := <-results; !errors.Is(err, ErrUnwritable) {
			t.Errorf("a waiter got %v, want ErrUnwritable", err)
		}
	}
	if info, err := os.Stat(l.Path()); err != nil || info.Size() != 0 {
		t.Errorf("copy size after failed writes: %v %v", info.Size(), err)
	}
}
