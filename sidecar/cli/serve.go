package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/seed-6e06167c/mcp-executor/sidecar"
	"github.com/seed-6e06167c/mcp-executor/sidecar/front/streamhttp"
	"github.com/seed-6e06167c/mcp-executor/sidecar/socket"
	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
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
	fs := newFlags(env, "serve", "--config FILE --listen unix:PATH|http://HOST:PORT/PATH [--listen ...] [--token-file SOURCE] [--allow-host HOST] [--health ADDR] [--drain DURATION] [--max-sessions N] [--write-timeout DURATION] [--boot-timeout DURATION] [--approve-session]")
	config := fs.String("config", "", "the executor's settings `file` (JSON)")
	var listen listenFlags
	fs.Var(&listen, "listen", "where clients reach the executor: `unix:PATH` (a Unix socket) or http://HOST:PORT/PATH (streamable HTTP); once each at most")
	tokenFile := fs.String("token-file", "", "for http://: the bearer tokens (one per line) a request must carry, from a `source` (a file, env:, vault:, secret:); needed for an address other than loopback")
	var allowHosts listenFlags
	fs.Var(&allowHosts, "allow-host", "for http://: a Host (`HOST` or HOST:PORT) taken beside the listen address's own names; repeatable")
	poolSize := fs.Int("http-pool", streamhttp.DefaultPoolSize, "for http://: executor sessions (each with its own tool server) serving 2026-07-28 requests, per bearer token")
	sessionIdle := fs.Duration("session-idle", streamhttp.DefaultSessionIdle, "for http://: a session no request used for this long ends")
	health := fs.String("health", "", "TCP `address` of /healthz and /readyz, e.g. :8081 (none when empty)")
	drain := fs.Duration("drain", 25*time.Second, "after SIGTERM, how long calls in flight are given to finish")
	maxSessions := fs.Int("max-sessions", DefaultMaxSessions, "how many sessions (each with its own tool server) may run at once; more are refused")
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
	sockAddr, httpURL, err := listen.split()
	if err != nil {
		fmt.Fprintf(env.Stderr, "mcp-executor serve: --listen: %v\n", err)
		return ExitUsage
	}
	var path string
	if sockAddr != "" {
		if path, err = socket.ParseAddress(sockAddr); err != nil {
			fmt.Fprintf(env.Stderr, "mcp-executor serve: --listen: %v\n", err)
			return ExitUsage
		}
	}
	if httpURL != "" {
		if _, err := streamhttp.ParseListen(httpURL); err != nil {
			fmt.Fprintf(env.Stderr, "mcp-executor serve: --listen: %v\n", err)
			return ExitUsage
		}
	} else if *tokenFile != "" || len(allowHosts) > 0 {
		fmt.Fprintln(env.Stderr, "mcp-executor serve: --token-file and --allow-host are for an http:// --listen")
		return ExitUsage
	}
	log := newLogger(env.Stderr)
	if err := serve(ctx, serveOptions{
		config: *config, socketPath: path, healthAddr: *health, drain: *drain, env: env, log: log,
		maxSessions: *maxSessions, writeTimeout: *writeTimeout, bootTimeout: *boot, approveSession: *approveSession,
		http: httpOptions{url: httpURL, tokenFile: *tokenFile, allowedHosts: allowHosts, poolSize: *poolSize, sessionIdle: *sessionIdle},
	}); err != nil {
		log.Error("serve stopped", slog.String("error", err.Error()))
		fmt.Fprintf(env.Stderr, "mcp-executor serve: %v\n", err)
		return ExitFinding
	}
	return ExitOK
}

type serveOptions struct {
	config     string
	socketPath string
	healthAddr string
	drain      time.Duration
	// maxSessions is how many sessions may run at once; writeTimeout bounds each write to a client.
	maxSessions  int
	writeTimeout time.Duration
	bootTimeout  time.Duration
	// approveSession approves every call held for approval (--approve-session).
	approveSession bool
	// http is the streamable HTTP endpoint's; none when http.url is empty.
	http httpOptions
	env  Env
	log  *slog.Logger
	// ready, when set, is told the socket's address once the executor accepts connections (tests).
	ready func()
}

// DefaultMaxSessions is serve's --max-sessions: each session runs a tool server of its own.
const DefaultMaxSessions = 8

// serve runs the executor on a Unix socket until ctx ends (SIGTERM), then drains: it stops accepting,
// ends every session's input so the sessions finish the calls in flight (each gets its receipt), waits
// up to o.drain, cuts what is left, and closes the executor after the last stub is written.
func serve(ctx context.Context, o serveOptions) error {
	hs := socket.NewHealth("keys", "book", "copy", "socket")
	hs.Metrics = o.env.Metrics
	if err := startHealth(ctx, o, hs); err != nil {
		return err
	}
	exe, err := sidecar.OpenBounded(ctx, sidecar.OpenOptions{ConfigPath: o.config, Logger: o.log, ApproveSession: o.approveSession}, o.bootTimeout)
	if err != nil {
		return err
	}
	// Open loads the keys, verifies the book and opens the copy, or fails.
	hs.Set("keys", nil)
	hs.Set("book", nil)
	hs.Set("copy", nil)
	defer func() {
		if cerr := exe.Close(); cerr != nil {
			o.log.Error("closing the executor", slog.String("error", cerr.Error()))
		}
	}()

	// When the executor stops taking calls, serve says so on both endpoints, drains as after SIGTERM
	// and exits non-zero: the pod restarts it and the next start writes the receipts the copy holds.
	stopCtx, stopServe := context.WithCancel(ctx)
	defer stopServe()
	go func() {
		select {
		case <-exe.Stopped():
			why := errors.New("the executor takes no more calls: " + exe.StopReason())
			hs.Set("executor", why)
			hs.SetDead(why)
			stopServe()
		case <-stopCtx.Done():
		}
	}()

	// A full book takes no new call: readiness says why, the process stays live (a restart would not help).
	go func() {
		select {
		case <-exe.BookFull():
			hs.Set("book", errors.New(exe.BookFullReason()))
		case <-stopCtx.Done():
		}
	}()

	var l *net.UnixListener
	if o.socketPath != "" {
		if l, err = socket.Listen(o.socketPath); err != nil {
			return err
		}
		o.log.Info("listening", slog.String("socket", o.socketPath))
	}
	var web *httpServing
	if o.http.url != "" {
		if web, err = startHTTP(ctx, o, exe); err != nil {
			if l != nil {
				_ = l.Close() // not serving: the socket goes
			}
			return err
		}
	}
	hs.Set("socket", nil)
	if o.ready != nil {
		o.ready()
	}

	// Sessions run under their own context: SIGTERM must not cut calls in flight.
	sessCtx, cutSessions := context.WithCancel(context.WithoutCancel(ctx))
	defer cutSessions()
	ss := &sessions{o: o, exe: exe, conns: map[*socket.Conn]struct{}{}}
	acceptDone := make(chan struct{})
	go func() {
		defer close(acceptDone)
		if l != nil {
			ss.accept(sessCtx, l)
		}
	}()

	<-stopCtx.Done()
	o.log.Info("stopping: no new sessions; draining calls in flight", slog.Duration("budget", o.drain))
	hs.Set("socket", errors.New("stopping"))
	if l != nil {
		if err := l.Close(); err != nil {
			o.log.Warn("closing the socket", slog.String("error", err.Error()))
		}
	}
	<-acceptDone
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		if web != nil {
			web.stop(o.drain, o.log)
		}
	}()
	ss.drain(cutSessions)
	<-drained
	if why := exe.StopReason(); why != "" {
		return fmt.Errorf("%w: %s", sidecar.ErrStopped, why)
	}
	return nil
}

// startHealth serves the health endpoint at o.healthAddr, when one is named, until ctx ends.
func startHealth(ctx context.Context, o serveOptions, hs *socket.Health) error {
	if o.healthAddr == "" {
		return nil
	}
	addr, errc, err := socket.ServeHealth(ctx, o.healthAddr, hs)
	if err != nil {
		return err
	}
	o.log.Info("health endpoint", slog.String("address", addr.String()))
	go func() {
		if err := <-errc; err != nil {
			o.log.Error("health endpoint stopped", slog.String("error", err.Error()))
		}
	}()
	return nil
}

// sessions are the connections serve runs, each a session of its own with its own tool server.
type sessions struct {
	o   serveOptions
	exe *sidecar.Executor

	mu    sync.Mutex
	conns map[*socket.Conn]struct{}
	wg    sync.WaitGroup
}

// accept takes connections from l until it is closed, runs each as a session under ctx, and refuses
// those over o.maxSessions.
func (ss *sessions) accept(ctx context.Context, l *net.UnixListener) {
	for n := 1; ; n++ {
		conn, err := l.AcceptUnix()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				ss.o.log.Error("accepting a connection", slog.String("error", err.Error()))
			}
			return
		}
		peer, perr := socket.Peer(conn)
		attrs := []any{slog.Int("session", n)}
		if perr == nil {
			attrs = append(attrs, slog.Uint64("peer_uid", uint64(peer.UID)), slog.Int("peer_pid", int(peer.PID)))
		} else {
			attrs = append(attrs, slog.String("peer_error", perr.Error()))
		}
		sc := socket.NewConn(conn, ss.o.writeTimeout)
		ss.mu.Lock()
		if len(ss.conns) >= ss.o.maxSessions {
			ss.mu.Unlock()
			ss.o.log.Warn("session refused: --max-sessions are running", append(attrs, slog.Int("max_sessions", ss.o.maxSessions))...)
			go refuseSession(sc, ss.o.maxSessions)
			continue
		}
		ss.conns[sc] = struct{}{}
		ss.mu.Unlock()
		ss.o.log.Info("session opened", attrs...)
		ss.wg.Add(1)
		go ss.run(ctx, n, sc)
	}
}

// run serves session n on conn until the client or the tool server ends it.
func (ss *sessions) run(ctx context.Context, n int, conn *socket.Conn) {
	defer ss.wg.Done()
	defer func() {
		ss.mu.Lock()
		delete(ss.conns, conn)
		ss.mu.Unlock()
		_ = conn.Close() // the session is over: nothing is left to send on it
	}()
	err := ss.exe.Serve(ctx, conn, conn, ss.o.env.Stderr)
	if code, ok := sidecar.IsExit(err); ok {
		ss.o.log.Info("session ended: the tool server exited", slog.Int("session", n), slog.Int("code", code))
	} else if err != nil && !errors.Is(err, context.Canceled) {
		ss.o.log.Warn("session ended", slog.Int("session", n), slog.String("error", err.Error()))
	} else {
		ss.o.log.Info("session ended", slog.Int("session", n))
	}
}

// drain ends every session's input, so that the calls already sent finish and get their receipts, and
// waits up to o.drain for the sessions to end; then it cuts those left (cut ends their context).
func (ss *sessions) drain(cut context.CancelFunc) {
	ss.mu.Lock()
	for c := range ss.conns {
		// End the session's input: calls already sent finish and get their receipts; answers still go out.
		_ = c.CloseRead()
	}
	ss.mu.Unlock()
	drained := make(chan struct{})
	go func() { ss.wg.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(ss.o.drain):
		ss.o.log.Warn("drain budget spent: cutting the sessions left; their sent calls still get receipts")
		cut()
		// A client that reads nothing holds no write past the budget.
		ss.mu.Lock()
		for c := range ss.conns {
			c.Cut()
		}
		ss.mu.Unlock()
		<-drained
	}
}

// refuseSession tells a client over the cap why it is refused, as a JSON-RPC error (code 1001, id null),
// and closes the connection.
func refuseSession(c *socket.Conn, maxSessions int) {
	defer func() { _ = c.Close() }() // refused: nothing more is sent on it
	msg := fmt.Sprintf("not taken: the executor already runs %d sessions (serve --max-sessions); try again when one has ended", maxSessions)
	_, _ = c.Write(append(wire.ErrorLine([]byte("null"), wire.CodeNotTaken, msg, nil), '\n'))
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
