package socket

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// DefaultWriteTimeout is how long one write to a session's client may take
// before the client is taken to be gone.
const DefaultWriteTimeout = 10 * time.Second

// ErrCut is the error of a write after [Conn.Cut] or after a write ran out
// of time.
var ErrCut = errors.New("the connection to the client was cut")

// Conn is a session's connection whose every write has a deadline: a client
// that stops reading cannot hold a write (and so the session, and serve's
// drain) for longer than the timeout. A write that runs out of time closes
// the connection, and every later write fails at once.
type Conn struct {
	*net.UnixConn
	timeout time.Duration

	mu  sync.Mutex // one write at a time; guards cut
	cut bool
}

// NewConn wraps c with a write timeout (DefaultWriteTimeout when <= 0).
func NewConn(c *net.UnixConn, timeout time.Duration) *Conn {
	if timeout <= 0 {
		timeout = DefaultWriteTimeout
	}
	return &Conn{UnixConn: c, timeout: timeout}
}

// Write writes p with a deadline of the timeout from now.
func (c *Conn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut {
		return 0, ErrCut
	}
	if err := c.UnixConn.SetWriteDeadline(time.Now().Add(c.timeout)); err != nil {
		return 0, fmt.Errorf("setting the write deadline: %w", err)
	}
	n, err := c.UnixConn.Write(p)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		c.cut = true
		_ = c.UnixConn.Close() // cut: the timeout is the error to report
		return n, fmt.Errorf("the client read nothing for %s: %w", c.timeout, ErrCut)
	}
	return n, err
}

// Cut ends the connection at once: a write in progress fails now, and so
// does every later one.
func (c *Conn) Cut() {
	_ = c.UnixConn.SetWriteDeadline(time.Unix(1, 0))
	c.mu.Lock()
	c.cut = true
	c.mu.Unlock()
	_ = c.UnixConn.Close() // cut on purpose: nothing is left to send
}
