package cli

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/seed-6e06167c/mcp-executor/sidecar"
	"github.com/seed-6e06167c/mcp-executor/sidecar/front"
	"github.com/seed-6e06167c/mcp-executor/sidecar/front/socket"
)

func init() {
	extraCommands["serve"] = command{
		summary: "run the executor on a Unix socket, one MCP session per connection",
		run:     runServe,
	}
	extraCommands["bridge"] = command{
		summary: "join standard input and output to a serve socket (for the agent's MCP client)",
		run:     runBridge,
	}
}

func runServe(ctx context.Context, env Env, args []string) int {
	fs := newFlags(env, "serve", "--config FILE --listen unix:PATH [--health ADDR] [--drain DURATION] [--max-sessions N] [--write-timeout DURATION] [--boot-timeout DURATION] [--approve-session]")
	config := fs.String("config", "", "the executor's settings `file` (JSON)")
	listen := fs.String("listen", "", "the socket to listen on, `unix:PATH`")
	health := fs.String("health", "", "TCP `address` of /healthz and /readyz, e.g. :8081 (none when empty)")
	drain := fs.Duration("drain", 25*time.Second, "after SIGTERM, how long calls in flight are given to finish")
	maxSessions := fs.Int("max-sessions", front.DefaultMaxSessions, "how many sessions (each with its own tool server) may run at once; more are refused")
	boot := fs.Duration("boot-timeout", sidecar.DefaultBootTimeout, "how long start-up (keys, credentials, the book's check, recovery) may take")
	writeTimeout := fs.Duration("write-timeout", socket.DefaultWriteTimeout, "how long one write to a client may take before the client is taken to be gone")
	approveSession := fs.Bool("approve-session", false, approveSessionUsage)
	if code, done := parseFlags(fs, args); done {
		return code
	}
	if *config == "" || *listen == "" || fs.NArg() != 0 {
		fmt.Fprintln(env.Stderr, "mcp-executor serve: --config FILE and --listen unix:PATH are required")
		fs.Usage()
		return ExitUsage
	}
	if *maxSessions < 1 || *writeTimeout <= 0 || *drain < 0 {
		fmt.Fprintln(env.Stderr, "mcp-executor serve: --max-sessions must be at least 1, --write-timeout more than 0 and --drain not negative")
		return ExitUsage
	}
	path, err := socket.ParseAddress(*listen)
	if err != nil {
		fmt.Fprintf(env.Stderr, "mcp-executor serve: --listen: %v\n", err)
		return ExitUsage
	}
	log := newLogger(env.Stderr)
	if err := front.ServeSocket(ctx, front.SocketOptions{
		ConfigPath: *config, SocketPath: path, HealthAddr: *health, Drain: *drain, Stderr: env.Stderr, Logger: log,
		Metrics: env.Metrics, MaxSessions: *maxSessions, WriteTimeout: *writeTimeout, BootTimeout: *boot,
		ApproveSession: *approveSession,
	}); err != nil {
		log.Error("serve stopped", slog.String("error", err.Error()))
		fmt.Fprintf(env.Stderr, "mcp-executor serve: %v\n", err)
		return ExitFinding
	}
	return ExitOK
}

func runBridge(ctx context.Context, env Env, args []string) int {
	fs := newFlags(env, "bridge", "--connect unix:PATH")
	connect := fs.String("connect", "", "the executor's socket, `unix:PATH`")
	if code, done := parseFlags(fs, args); done {
		return code
	}
	if *connect == "" || fs.NArg() != 0 {
		fmt.Fprintln(env.Stderr, "mcp-executor bridge: --connect unix:PATH is required")
		fs.Usage()
		return ExitUsage
	}
	if _, err := socket.ParseAddress(*connect); err != nil {
		fmt.Fprintf(env.Stderr, "mcp-executor bridge: --connect: %v\n", err)
		return ExitUsage
	}
	stdin, restore, err := polledStdin(env.Stdin)
	if err != nil {
		fmt.Fprintf(env.Stderr, "mcp-executor bridge: %v\n", err)
		return ExitFinding
	}
	defer restoreStdin(restore, newLogger(env.Stderr))
	if err := socket.Bridge(ctx, *connect, stdin, env.Stdout); err != nil {
		fmt.Fprintf(env.Stderr, "mcp-executor bridge: %v\n", err)
		return ExitFinding
	}
	return ExitOK
}
