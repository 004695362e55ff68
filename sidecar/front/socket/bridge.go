// Package socket holds the Unix-socket side of the executor: the address form `unix:PATH`, the
// listener `serve` uses (mode 0660, the peer's uid read with SO_PEERCRED) and the `bridge` that joins
// an agent's MCP client on standard input and output to that socket.
package socket

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
)

// ParseAddress returns the socket path of an address written `unix:PATH`.
func ParseAddress(addr string) (string, error) {
	path, ok := strings.CutPrefix(addr, "unix:")
	if !ok || path == "" {
		return "", fmt.Errorf("address %q: write it as unix:PATH (only Unix sockets are supported)", addr)
	}
	return path, nil
}

// Bridge copies stdin to the socket at addr and the socket's bytes to stdout, until either side
// closes. When stdin ends, the write half of the connection is closed so the executor sees the end of
// the session and can finish calls in flight; the bridge then waits for the executor to close.
func Bridge(ctx context.Context, addr string, stdin io.Reader, stdout io.Writer) error {
	path, err := ParseAddress(addr)
	if err != nil {
		return err
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return fmt.Errorf("connecting to the executor at %s: %w (is `mcp-executor serve` running, and may this user open the socket?)", path, err)
	}
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		_ = conn.Close() // nothing was sent on it
		return fmt.Errorf("connecting to the executor at %s: the connection is a %T, not a Unix socket", path, conn)
	}
	// Closing the connection is how the bridge ends; a failed close of a socket loses nothing.
	defer func() { _ = uc.Close() }()

	stop := context.AfterFunc(ctx, func() { _ = uc.Close() })
	defer stop()

	upDone := make(chan error, 1)
	go func() {
		_, err := io.Copy(uc, stdin)
		// The client is done sending: half-close so the executor reads EOF.
		_ = uc.CloseWrite()
		upDone <- err
	}()
	_, downErr := io.Copy(stdout, uc)
	// The executor closed the session. A read of stdin still blocked cannot be interrupted
	// portably; the process exits right after, so the copy goroutine is not waited for.
	_ = uc.Close()
	var upErr error
	select {
	case upErr = <-upDone:
	default:
	}
	if ctx.Err() != nil {
		return nil
	}
	if downErr != nil && !errors.Is(downErr, net.ErrClosed) {
		return fmt.Errorf("reading from the executor at %s: %w", path, downErr)
	}
	if upErr != nil && !errors.Is(upErr, net.ErrClosed) && !errors.Is(upErr, io.ErrClosedPipe) && !errors.Is(upErr, io.EOF) {
		return fmt.Errorf("sending to the executor at %s: %w", path, upErr)
	}
	return nil
}
