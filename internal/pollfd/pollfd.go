// Package pollfd lets a process read its standard input through Go's
// runtime poller instead of a blocking read(2).
//
// Go opens standard input as it finds it: a pipe left in blocking mode is
// read with a read(2) that holds a thread, and its processor with it, until
// bytes come. A goroutine made ready just before that read (the next step
// of a tool call) then waits for the scheduler to take the processor back
// or for an idle core to wake and steal it: tens of microseconds on a
// virtual machine whose idle cores sleep, on every message. Read through
// the poller, the reading goroutine parks instead, and the goroutine it
// readied runs at once on the same core.
package pollfd

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Reader returns a file that reads what f reads through the runtime poller,
// and a function that closes it and puts f's descriptor back in blocking
// mode; call it once reading is over.
//
// Only a pipe or a socket is read so. A pipe is opened again through
// /proc/self/fd, which makes a new open file description of the same pipe
// whose mode is this process's alone: the parent's is never changed. A
// socket cannot be opened so: its own description is made non-blocking
// and put back in blocking mode by the function (which a kill -9 never
// runs; a parent rarely shares the socket it gives a child). A terminal is
// shared with the shell that started the process, and a non-blocking
// terminal can break that shell; a regular file never blocks; a descriptor
// already non-blocking is polled by Go already. In each of those cases f
// itself comes back, with a function that does nothing.
func Reader(f *os.File) (*os.File, func() error, error) {
	none := func() error { return nil }
	// Not f.Fd(): that would put a polled file in blocking mode.
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, nil, fmt.Errorf("looking at %s: %w", f.Name(), err)
	}
	fd := -1
	if err := rc.Control(func(d uintptr) { fd = int(d) }); err != nil {
		return nil, nil, fmt.Errorf("looking at %s: %w", f.Name(), err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, nil, fmt.Errorf("looking at %s: %w", f.Name(), err)
	}
	if kind := st.Mode & unix.S_IFMT; kind != unix.S_IFIFO && kind != unix.S_IFSOCK {
		return f, none, nil
	}
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the flags of %s: %w", f.Name(), err)
	}
	if flags&unix.O_NONBLOCK != 0 {
		return f, none, nil
	}
	if st.Mode&unix.S_IFMT == unix.S_IFIFO {
		// A pipe opened again by its /proc name is a new open file
		// description of the same pipe, with a mode of its own: the one
		// the parent shares is never changed, so a stop that cannot put
		// anything back (kill -9) leaves nothing to put back.
		own, err := unix.Open(fmt.Sprintf("/proc/self/fd/%d", fd), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err == nil {
			polled := os.NewFile(uintptr(own), f.Name())
			return polled, polled.Close, nil
		}
		// No /proc: the pipe's own description is made non-blocking, as a socket's is.
	}
	dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("duplicating %s: %w", f.Name(), err)
	}
	if err := unix.SetNonblock(dup, true); err != nil {
		return nil, nil, errors.Join(fmt.Errorf("making %s non-blocking: %w", f.Name(), err), unix.Close(dup))
	}
	// os.NewFile sees the descriptor non-blocking and registers it with
	// the poller.
	polled := os.NewFile(uintptr(dup), f.Name())
	restore := func() error {
		cerr := polled.Close()
		if err := unix.SetNonblock(fd, false); err != nil {
			return errors.Join(cerr, fmt.Errorf("putting %s back in blocking mode: %w", f.Name(), err))
		}
		return cerr
	}
	return polled, restore, nil
}
