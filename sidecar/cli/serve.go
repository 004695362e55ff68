package cli

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/seed-6e06167c/mcp-executor/sidecar"
	"github.com/seed-6e06167c/mcp-executor/sidecar/front"
	"github.com/seed-6e06167c/mcp-executor/sidecar/front/socket"
	"github.com/seed-6e06167c/mcp-executor/sidecar/front/streamhttp"
)

func init() {
	extraCommands["serve"] = command{
		summary: "run the executor on a Unix socket (one MCP session per connection) and/or a streamable HTTP endpoint",
		run:     runServe,
	}
	extraCommands["bridge"] = command{
		summary: "join standard input and output to a serve socket (for the agent's MCP client)",
		run:     runBridge,
	}
}

func runServe(ctx context.Context, env Env, args []string) int {
	fs := newFlags(env, "serve", "--config FILE --listen unix:PATH|http://HOST:PORT/PATH [--listen ...] [--token-file SOURCE] [--allow-host HOST] [--http-pool N] [--session-idle DURATION] [--health ADDR] [--drain DURATION] [--max-sessions N] [--write-timeout DURATION] [--boot-timeout DURATION] [--approve-session]")
	config := fs.String("config", "", "the executor's settings `file` (JSON)")
	var listen multiFlag
	fs.Var(&listen, "listen", "where clients reach the executor: `unix:PATH` (a Unix socket) or http://HOST:PORT/PATH (streamable HTTP); each once at most")
	tokenFile := fs.String("token-file", "", "for http://: the bearer tokens (one per line) a request must carry, from a `source` (a file, env:, vault:, secret:); needed for an address other than loopback")
	var allowHosts multiFlag
	fs.Var(&allowHosts, "allow-host", "for http://: a Host (`HOST` or HOST:PORT) taken beside the listen address's own names; repeatable")
	poolSize := fs.Int("http-pool", streamhttp.DefaultPoolSize, "for http://: executor sessions (each with its own tool server) serving 2026-07-28 requests, per bearer token")
	sessionIdle := fs.Duration("session-idle", streamhttp.DefaultSessionIdle, "for http://: a session no request used for this long ends")
	health := fs.String("health", "", "TCP `address` of /healthz and /readyz, e.g. :8081 (none when empty)")
	drain := fs.Duration("drain", 25*time.Second, "after SIGTERM, how long calls in flight are given to finish")
	maxSessions := fs.Int("max-sessions", front.DefaultMaxSessions, "how many sessions (each with its own tool server) may run at once, on the socket and over HTTP together; more are refused")
	boot := fs.Duration("boot-timeout", sidecar.DefaultBootTimeout, "how long start-up (keys, credentials, the book's check, recovery) may take")
	writeTimeout := fs.Duration("write-timeout", socket.DefaultWriteTimeout, "how long one write to a client may take before the client is taken to be gone")
	approveSession := fs.Bool("approve-session", false, approveSessionUsage)
	if code, done := parseFlags(fs, args); done {
		return code
	}
	if *config == "" || len(listen) == 0 || fs.NArg() != 0 {
		fmt.Fprintln(env.Stderr, "mcp-executor serve: --config FILE and --listen unix:PATH or http://HOST:PORT/PATH are required")
		fs.Usage()
		return ExitUsage
	}
	if *maxSessions < 1 || *writeTimeout <= 0 || *drain < 0 || *poolSize < 1 || *sessionIdle <= 0 {
		fmt.Fprintln(env.Stderr, "mcp-executor serve: --max-sessions and --http-pool must be at least 1, --write-timeout and --session-idle more than 0 and --drain not negative")
		return ExitUsage
	}
	o := front.ServeOptions{
		ConfigPath: *config, HealthAddr: *health, Drain: *drain, Stderr: env.Stderr,
		Metrics: env.Metrics, MaxSessions: *maxSessions, WriteTimeout: *writeTimeout, BootTimeout: *boot,
		ApproveSession: *approveSession,
	}
	for _, l := range listen {
		var err error
		switch {
		case strings.HasPrefix(l, "unix:") && o.SocketPath == "":
			o.SocketPath, err = socket.ParseAddress(l)
		case strings.HasPrefix(l, "http://") && o.HTTP == nil:
			_, err = streamhttp.ParseListen(l)
			o.HTTP = &front.HTTPOptions{URL: l, TokenSource: *tokenFile, AllowedHosts: allowHosts, PoolSize: *poolSize, SessionIdle: *sessionIdle}
		default:
			err = fmt.Errorf("%q: want one unix:PATH and one http://HOST:PORT/PATH at most", l)
		}
		if err != nil {
			fmt.Fprintf(env.Stderr, "mcp-executor serve: --listen: %v\n", err)
			return ExitUsage
		}
	}
	if o.HTTP == nil && (*tokenFile != "" || len(allowHosts) > 0) {
		fmt.Fprintln(env.Stderr, "mcp-executor serve: --token-file and --allow-host are for an http:// --listen")
		return ExitUsage
	}
	log := newLogger(env.Stderr)
	o.Logger = log
	if err := front.Serve(ctx, o); err != nil {
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
