package sidecar

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
	"github.com/seed-6e06167c/mcp-executor/sidecar/toolserver"
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

// Serve starts a tool server for one agent connection and runs a session
// between it and the client until either side ends.
func (e *Executor) Serve(ctx context.Context, in io.Reader, out io.Writer, serverStderr io.Writer) error {
	if e.set.Servers != nil {
		return e.serveRouted(ctx, in, out, serverStderr)
	}
	srv, err := e.startServer(ctx, serverStderr)
	if err != nil {
		return err
	}
	err = e.NewSession(in, out, srv).Run(ctx)
	// Run has read the server's output to its end: its pipes go now, not at
	// the garbage collector's leisure.
	if cerr := srv.p.Close(context.WithoutCancel(ctx)); cerr != nil {
		e.log.Warn("closing the tool server's pipes", slog.String("error", cerr.Error()))
	}
	return err
}

// startServer starts the tool server the settings name, with its
// credentials and the passed-on environment only.
func (e *Executor) startServer(ctx context.Context, stderr io.Writer) (*processServer, error) {
	set := e.set
	env, err := serverEnv(ctx, set, e.log)
	if err != nil {
		return nil, err
	}
	if stderr == nil {
		stderr = os.Stderr
	}
	// The server lives as long as the session, not the start-up context.
	p, err := toolserver.Start(context.WithoutCancel(ctx), toolserver.Spec{
		Command: set.Server.Command, Args: set.Server.Args, Dir: set.Server.Cwd, Path: set.Server.Path,
		Env: env, PassEnv: set.Server.PassEnv, Stderr: stderr, ShutdownWait: set.ShutdownWait,
	})
	if err != nil {
		return nil, err
	}
	for _, w := range p.Warnings {
		e.log.Warn("tool server", slog.String("warning", w))
	}
	e.log.Info("tool server started", slog.String("program", p.Path), slog.Int("pid", p.Pid()))
	return &processServer{p}, nil
}

// processServer is a toolserver.Process as a session's toolServer.
type processServer struct{ p *toolserver.Process }

func (s *processServer) Input() io.Writer               { return s.p.Stdin }
func (s *processServer) Output() io.Reader              { return s.p.Stdout }
func (s *processServer) Stop(ctx context.Context) error { return s.p.Stop(ctx) }
func (s *processServer) Wait() (int, error)             { return s.p.Wait() }
func (s *processServer) Done() <-chan struct{}          { return s.p.Done() }

// IsExit reports whether err says the tool server exited, and its code.
func IsExit(err error) (int, bool) {
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code, true
	}
	return 0, false
}

// serverEnv resolves the tool server's environment: the values the settings hold and the credentials
// read from their sources. Each session reads them again, so a rotated credential is picked up.
func serverEnv(ctx context.Context, set *settings.Settings, log *slog.Logger) (map[string]string, error) {
	env, err := resolveVars(ctx, set, set.Server.Env, log)
	if err != nil {
		return nil, fmt.Errorf("the tool server's credentials: %w", err)
	}
	return env, nil
}
