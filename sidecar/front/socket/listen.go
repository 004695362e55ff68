package socket

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// SocketMode is the permission of the socket file: the executor's user and group may connect (the
// agent container shares the group through the pod's fsGroup), nobody else.
const SocketMode fs.FileMode = 0o660

// Listen creates the Unix socket at path with mode SocketMode. A socket file left by an earlier run
// is removed; any other kind of file at path is an error, never overwritten.
func Listen(path string) (*net.UnixListener, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&fs.ModeSocket == 0 {
			return nil, fmt.Errorf("listening on %s: a file that is not a socket is there; remove it or choose another path", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("removing the old socket %s: %w", path, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("listening on %s: %w", path, err)
	}
	// Create the socket with no access for others from the first instant, then widen to 0660.
	old := unix.Umask(0o117)
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	unix.Umask(old)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", path, err)
	}
	if err := os.Chmod(path, SocketMode); err != nil {
		return nil, errors.Join(fmt.Errorf("setting the mode of socket %s: %w", path, err), l.Close())
	}
	return l, nil
}

// PeerCred is who is on the other end of a Unix connection, as the kernel reports it.
type PeerCred struct {
	UID, GID uint32
	PID      int32
}

// Peer reads the peer's credentials of conn with SO_PEERCRED.
func Peer(conn *net.UnixConn) (PeerCred, error) {
	raw, err := conn.SyscallConn()
	if err != nil {
		return PeerCred{}, fmt.Errorf("reading the peer of a socket connection: %w", err)
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return PeerCred{}, fmt.Errorf("reading the peer of a socket connection: %w", err)
	}
	if credErr != nil {
		return PeerCred{}, fmt.Errorf("reading the peer of a socket connection (SO_PEERCRED): %w", credErr)
	}
	return PeerCred{UID: cred.Uid, GID: cred.Gid, PID: cred.Pid}, nil
}
