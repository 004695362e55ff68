package sidecar

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/seed-6e06167c/mcp-executor/sidecar/upstream"
)

// StdioOptions are what `mcp-executor stdio` runs with.
type StdioOptions struct {
	ConfigPath string
	Stdin      io.Reader // the agent's client
	Stdout     io.Writer // to the agent's client: protocol only
	Stderr     io.Writer // the tool server's stderr goes here, line by line
	Logger     *slog.Logger
	// BootTimeout bounds start-up (keys, credentials, the book's check,
	// recovery); 0 means DefaultBootTimeout.
	BootTimeout time.Duration
	// Drain is how long calls in flight are given to finish after ctx ends
	// (SIGTERM); 0 means DefaultDrain.
	Drain time.Duration
	// ApproveSession approves every call held for approval (--approve-session).
	ApproveSession bool
}

// DefaultDrain is how long calls in flight are given after SIGTERM.
const DefaultDrain = 25 * time.Second

func (o StdioOptions) drainBudget() time.Duration {
	if o.Drain <= 0 {
		return DefaultDrain
	}
	return o.Drain
}

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

// RunStdio starts the executor, starts the tool server, and serves one
// session over Stdin and Stdout until the client closes Stdin (nil) or the
// tool server exits (*ExitError: exit with its code).
func RunStdio(ctx context.Context, o StdioOptions) error {
	e, err := OpenBounded(ctx, OpenOptions{ConfigPath: o.ConfigPath, Logger: o.Logger, ApproveSession: o.ApproveSession}, o.BootTimeout)
	if err != nil {
		return err
	}
	// When the executor stops taking calls the session ends and the process
	// exits non-zero, so that whatever runs it starts it again.
	// On a signal (ctx ends) the calls in flight finish first, within the
	// drain budget; new calls get 1001. Then the session and its server end.
	sessCtx, endSession := context.WithCancel(context.WithoutCancel(ctx))
	defer endSession()
	go func() {
		select {
		case <-e.Stopped():
		case <-ctx.Done():
			e.log.Info("stopping: no new calls; draining calls in flight", slog.Duration("budget", o.drainBudget()))
			drainCtx, cancel := context.WithTimeout(sessCtx, o.drainBudget())
			e.Drain(drainCtx)
			cancel()
		case <-sessCtx.Done():
		}
		endSession()
	}()
	runErr := e.Serve(sessCtx, o.Stdin, o.Stdout, o.Stderr)
	if why := e.StopReason(); why != "" {
		runErr = fmt.Errorf("%w: %s", ErrStopped, why)
	}
	if cerr := e.Close(); cerr != nil {
		e.log.Error("closing the executor", slog.String("error", cerr.Error()))
		if runErr == nil {
			runErr = cerr
		}
	}
	return runErr
}

// Serve starts the tool servers for one agent connection and runs a
// session between them and the client until either side ends.
func (e *Executor) Serve(ctx context.Context, in io.Reader, out io.Writer, serverStderr io.Writer) error {
	srv, err := upstream.Open(ctx, e.set, serverStderr, e.log)
	if err != nil {
		return err
	}
	err = e.NewSession(in, out, srv).Run(ctx)
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
