package front

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/seed-6e06167c/mcp-executor/sidecar"
)

// StdioOptions are what `mcp-executor stdio` runs with.
type StdioOptions struct {
	ConfigPath string
	Stdin      io.Reader // the agent's client
	Stdout     io.Writer // to the agent's client: protocol only
	Stderr     io.Writer // the tool server's stderr goes here, line by line
	Logger     *slog.Logger
	// BootTimeout bounds start-up (keys, credentials, the book's check,
	// recovery); 0 means sidecar.DefaultBootTimeout.
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

// RunStdio starts the executor, starts the tool server, and serves one
// session over Stdin and Stdout until the client closes Stdin (nil) or the
// tool server exits (*sidecar.ExitError: exit with its code).
func RunStdio(ctx context.Context, o StdioOptions) error {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	e, err := sidecar.OpenBounded(ctx, sidecar.OpenOptions{ConfigPath: o.ConfigPath, Logger: log, ApproveSession: o.ApproveSession}, o.BootTimeout)
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
			log.Info("stopping: no new calls; draining calls in flight", slog.Duration("budget", o.drainBudget()))
			drainCtx, cancel := context.WithTimeout(sessCtx, o.drainBudget())
			e.Drain(drainCtx)
			cancel()
		case <-sessCtx.Done():
		}
		endSession()
	}()
	runErr := e.Serve(sessCtx, o.Stdin, o.Stdout, o.Stderr)
	if why := e.StopReason(); why != "" {
		runErr = fmt.Errorf("%w: %s", sidecar.ErrStopped, why)
	}
	if cerr := e.Close(); cerr != nil {
		log.Error("closing the executor", slog.String("error", cerr.Error()))
		if runErr == nil {
			runErr = cerr
		}
	}
	return runErr
}
