package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/seed-6e06167c/mcp-executor/internal/pollfd"
	"github.com/seed-6e06167c/mcp-executor/sidecar"
	"github.com/seed-6e06167c/mcp-executor/sidecar/front"
)

func runStdio(ctx context.Context, env Env, args []string) int {
	fs := newFlags(env, "stdio", "--config FILE [--drain DURATION] [--boot-timeout DURATION] [--approve-session]")
	config := fs.String("config", "", "the executor's settings `file` (JSON)")
	drain := fs.Duration("drain", front.DefaultDrain, "after SIGTERM, how long calls in flight are given to finish")
	boot := fs.Duration("boot-timeout", sidecar.DefaultBootTimeout, "how long start-up (keys, credentials, the book's check, recovery) may take")
	approveSession := fs.Bool("approve-session", false, approveSessionUsage)
	if code, done := parseFlags(fs, args); done {
		return code
	}
	if *config == "" || fs.NArg() != 0 {
		fmt.Fprintln(env.Stderr, "mcp-executor stdio: --config FILE is required, and nothing else")
		fs.Usage()
		return ExitUsage
	}
	log := newLogger(env.Stderr)
	stdin, restore, err := polledStdin(env.Stdin)
	if err != nil {
		fmt.Fprintf(env.Stderr, "mcp-executor stdio: %v\n", err)
		return ExitFinding
	}
	defer restoreStdin(restore, log)
	err = front.RunStdio(ctx, front.StdioOptions{
		ConfigPath: *config, Stdin: stdin, Stdout: env.Stdout, Stderr: env.Stderr, Logger: log,
		BootTimeout: *boot, Drain: *drain, ApproveSession: *approveSession,
	})
	if code, ok := sidecar.IsExit(err); ok {
		log.Info("exiting with the tool server's code", slog.Int("code", code))
		return code
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		log.Error("the executor stopped", slog.String("error", err.Error()))
		fmt.Fprintf(env.Stderr, "mcp-executor stdio: %v\n", err)
		return ExitFinding
	}
	return signalCode(ctx)
}

// approveSessionUsage is the --approve-session flag's help (stdio and serve).
const approveSessionUsage = "approve every call held for a person's approval in this process, without asking anyone (recorded as channel \"session\"; for development only)"

// signalCode is 0 after a normal end, 130 when SIGINT ended the run and 143 for SIGTERM. The root
// context comes from signal.NotifyContext, whose cause names the signal.
func signalCode(ctx context.Context) int {
	if ctx.Err() == nil {
		return ExitOK
	}
	if cause := context.Cause(ctx); cause != nil && strings.Contains(cause.Error(), "interrupt") {
		return 130
	}
	return 143
}

// polledStdin reads the process's standard input through Go's poller when
// it is a blocking pipe or socket (package pollfd says why); any other
// reader comes back as it is.
func polledStdin(in io.Reader) (io.Reader, func() error, error) {
	f, ok := in.(*os.File)
	if !ok {
		return in, func() error { return nil }, nil
	}
	polled, restore, err := pollfd.Reader(f)
	if err != nil {
		return nil, nil, fmt.Errorf("standard input: %w", err)
	}
	return polled, restore, nil
}

// restoreStdin puts standard input back as it was, logging a failure (the
// run is over; nothing else depends on it).
func restoreStdin(restore func() error, log *slog.Logger) {
	if err := restore(); err != nil {
		log.Warn("standard input could not be put back as it was", slog.String("error", err.Error()))
	}
}
