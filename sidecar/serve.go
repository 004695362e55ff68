package sidecar

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/seed-6e06167c/mcp-executor/sidecar/upstream"
	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// DefaultBootTimeout is how long start-up may take unless told otherwise.
const DefaultBootTimeout = 2 * time.Minute

// OpenBounded is Open under a boot timeout (DefaultBootTimeout when <= 0):
// a key store or Vault that does not answer cannot hold the start forever.
func OpenBounded(ctx context.Context, o OpenOptions, timeout time.Duration) (*Executor, error) {
	if timeout <= 0 {
		timeout = DefaultBootTimeout
	}
	bootCtx, cancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("start-up took longer than the boot timeout (%s)", timeout))
	defer cancel()
	e, err := Open(bootCtx, o)
	if err != nil && bootCtx.Err() != nil && ctx.Err() == nil {
		return nil, fmt.Errorf("%w: %w", context.Cause(bootCtx), err)
	}
	return e, err
}

// A ClientConn is how one client reaches a session, whatever the
// transport (standard input and output, the Unix socket, streamable HTTP).
// The session calls ReadMessage from one goroutine and WriteLine from
// several; a ClientConn writes each line whole.
type ClientConn interface {
	// ReadMessage returns the client's next line (without its line feed)
	// with its reading (wire.Inspect's). A *wire.Error (with the line) or
	// a *wire.TooLongError is a line that is not acceptable: the session
	// answers it and reads on. io.EOF ends the client's input: the session
	// finishes the calls in flight and ends; any other error does the same,
	// and is logged.
	ReadMessage() (line []byte, m *wire.Message, err error)
	// WriteLine writes one line (without its line feed) to the client.
	// related is the JSON-RPC id, as the client wrote it, of the client's
	// request the line belongs to: the id of an answer, or of the call an
	// executor's own elicitation (or its cancellation) is for; nil when
	// none is known (a server's notification or request passed through,
	// an answer to a line whose id could not be read).
	WriteLine(line, related []byte) error
}

// NewLineConn is the ClientConn of lines on a reader and a writer: JSON-RPC
// messages one a line (stdio and the Unix socket), each line at most
// wire.MaxLine bytes.
func NewLineConn(in io.Reader, out io.Writer) ClientConn {
	return &lineConn{r: wire.NewReader(in), w: wire.NewWriter(out)}
}

type lineConn struct {
	r *wire.Reader
	w *wire.Writer
}

func (c *lineConn) ReadMessage() ([]byte, *wire.Message, error) {
	line, err := c.r.ReadLine()
	if err != nil {
		return nil, nil, err
	}
	m, err := wire.Inspect(line)
	return line, m, err
}

func (c *lineConn) WriteLine(line, _ []byte) error { return c.w.WriteLine(line) }

// Serve runs one session with the client on in and out (NewLineConn).
func (e *Executor) Serve(ctx context.Context, in io.Reader, out io.Writer, serverStderr io.Writer) error {
	return e.ServeConn(ctx, NewLineConn(in, out), serverStderr)
}

// ServeConn starts the tool servers for one client connection and runs a
// session between them and the client until either side ends: nil when
// the client's input ended, *ExitError when the tool server exited. Many
// sessions may share one Executor (serve mode).
func (e *Executor) ServeConn(ctx context.Context, c ClientConn, serverStderr io.Writer) error {
	srv, err := upstream.Open(ctx, e.set, serverStderr, e.log)
	if err != nil {
		return err
	}
	err = e.NewSession(c, srv).Run(ctx)
	// Run has read the servers' output to its end: their pipes go now, not
	// at the garbage collector's leisure.
	if cerr := srv.Close(context.WithoutCancel(ctx)); cerr != nil {
		e.log.Warn("closing the tool server's pipes", slog.String("error", cerr.Error()))
	}
	return err
}

// IsExit reports whether err says the tool server exited, and its code.
func IsExit(err error) (int, bool) {
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code, true
	}
	return 0, false
}
