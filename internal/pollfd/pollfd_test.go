package pollfd

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// nonblocking is whether f's descriptor is in non-blocking mode, read
// without f.Fd() (which would put a file Go polls in blocking mode).
func nonblocking(t *testing.T, f *os.File) bool {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var flags int
	var ferr error
	if err := rc.Control(func(fd uintptr) { flags, ferr = unix.FcntlInt(fd, unix.F_GETFL, 0) }); err != nil || ferr != nil {
		t.Fatal(err, ferr)
	}
	return flags&unix.O_NONBLOCK != 0
}

// TestReaderOfAPipe: a blocking pipe comes back as another file, polled
// (a read past its deadline ends, which a blocking read(2) would not), and
// bytes written reach it; the pipe's own descriptor, which a parent may
// share, stays blocking all the while, so a kill -9 leaves it as it was.
func TestReaderOfAPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	defer r.Close()
	// os.Pipe's files are polled already; make r blocking as a parent's
	// pipe would be.
	if err := unix.SetNonblock(int(r.Fd()), false); err != nil {
		t.Fatal(err)
	}
	if nonblocking(t, r) {
		t.Fatal("the pipe is not blocking to begin with")
	}
	polled, restore, err := Reader(r)
	if err != nil {
		t.Fatal(err)
	}
	if polled == r {
		t.Fatal("a blocking pipe came back unchanged")
	}
	if nonblocking(t, r) {
		t.Fatal("the pipe's shared description was made non-blocking")
	}
	if _, err := w.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 6)
	if _, err := io.ReadFull(polled, buf); err != nil || string(buf) != "hello\n" {
		t.Fatalf("read %q, %v", buf, err)
	}
	if err := polled.SetReadDeadline(time.Now().Add(10 * time.Millisecond)); err != nil {
		t.Fatalf("the file is not polled: %v", err)
	}
	if _, err := polled.Read(buf); !os.IsTimeout(err) {
		t.Fatalf("a read past its deadline: %v", err)
	}
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	if nonblocking(t, r) {
		t.Fatal("the pipe was left non-blocking")
	}
}

// TestReaderLeavesOthersAlone: a regular file and a pipe already polled
// come back as they are, still polled, and nothing is restored.
func TestReaderLeavesOthersAlone(t *testing.T) {
	regular, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer regular.Close()
	r, w, err := os.Pipe() // non-blocking already
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for name, f := range map[string]*os.File{"regular": regular, "polled pipe": r} {
		got, restore, err := Reader(f)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got != f {
			t.Fatalf("%s: changed", name)
		}
		if name == "polled pipe" {
			if err := f.SetReadDeadline(time.Now()); err != nil {
				t.Fatalf("the polled pipe is no longer polled: %v", err)
			}
		}
		if err := restore(); err != nil {
			t.Fatalf("%s: restore: %v", name, err)
		}
	}
}

// TestReaderOfABlockingSocket: a socket pair end in blocking mode is
// polled like a pipe.
func TestReaderOfABlockingSocket(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	s := os.NewFile(uintptr(fds[0]), "socket")
	peer := os.NewFile(uintptr(fds[1]), "peer")
	defer s.Close()
	defer peer.Close()
	polled, restore, err := Reader(s)
	if err != nil {
		t.Fatal(err)
	}
	if polled == s {
		t.Fatal("a blocking socket came back unchanged")
	}
	if !nonblocking(t, s) {
		t.Fatal("the socket is not non-blocking while read")
	}
	if _, err := peer.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1)
	if _, err := polled.Read(buf); err != nil || buf[0] != 'x' {
		t.Fatalf("read %q, %v", buf, err)
	}
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	if nonblocking(t, s) {
		t.Fatal("the socket was left non-blocking")
	}
}
