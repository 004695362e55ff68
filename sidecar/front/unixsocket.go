package front

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/seed-6e06167c/mcp-executor/sidecar"
	"github.com/seed-6e06167c/mcp-executor/sidecar/front/socket"
	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// ServeOptions are what `mcp-executor serve` runs with: a Unix socket, an HTTP endpoint, or both.
type ServeOptions struct {
	ConfigPath string
	SocketPath string       // the Unix socket to listen on; "" for none
	HTTP       *HTTPOptions // the streamable HTTP endpoint; nil for none
	HealthAddr string       // TCP address of /healthz, /readyz (and /metrics); "" for none
	Drain      time.Duration
	// MaxSessions is how many sessions may run at once, on the socket and over HTTP together;
	// WriteTimeout bounds each write to a client.
	MaxSessions  int
	WriteTimeout time.Duration
	BootTimeout  time.Duration
	// ApproveSession approves every call held for approval (--approve-session).
	ApproveSession bool
	// Stderr takes the tool servers' stderr; Logger the executor's log (nil: none).
	Stderr io.Writer
	Logger *slog.Logger
	// Metrics, when set, is served as /metrics beside the health endpoints.
	Metrics http.Handler
}

// DefaultMaxSessions is serve's --max-sessions: each session runs a tool server of its own.
const DefaultMaxSessions = 8

// Serve runs the executor on a Unix socket (one session a connection) and on an HTTP endpoint (a
// session per initialize, and the pooled sessions of 2026-07-28 requests) until ctx ends (SIGTERM), then
// drains: it stops accepting, ends every session's input so the sessions finish the calls in flight
// (each gets its receipt), waits up to o.Drain, cuts what is left, and closes the executor after the last
// stub is written.
func Serve(ctx context.Context, o ServeOptions) error {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	hs := socket.NewHealth("keys", "book", "copy", "socket")
	hs.Metrics = o.Metrics
	if err := startHealth(ctx, o, hs); err != nil {
		return err
	}
	exe, err := sidecar.OpenBounded(ctx, sidecar.OpenOptions{ConfigPath: o.ConfigPath, Logger: o.Logger, ApproveSession: o.ApproveSession}, o.BootTimeout)
	if err != nil {
		return err
	}
	// Open loads the keys, verifies the book and opens the copy, or fails.
	hs.Set("keys", nil)
	hs.Set("book", nil)
	hs.Set("copy", nil)
	defer func() {
		if cerr := exe.Close(); cerr != nil {
			o.Logger.Error("closing the executor", slog.String("error", cerr.Error()))
		}
	}()

	stopCtx, stopServe := context.WithCancel(ctx)
	defer stopServe()
	watch(stopCtx, exe, hs, stopServe)

	slots := &Slots{max: o.MaxSessions}
	l, web, err := listen(ctx, o, exe, slots)
	if err != nil {
		return err
	}
	hs.Set("socket", nil)

	// Sessions run under their own context: SIGTERM must not cut calls in flight.
	sessCtx, cutSessions := context.WithCancel(context.WithoutCancel(ctx))
	defer cutSessions()
	ss := &sessions{o: o, exe: exe, slots: slots, conns: map[*socket.Conn]struct{}{}}
	acceptDone := make(chan struct{})
	go func() {
		defer close(acceptDone)
		if l != nil {
			ss.accept(sessCtx, l)
		}
	}()

	<-stopCtx.Done()
	o.Logger.Info("stopping: no new sessions; draining calls in flight", slog.Duration("budget", o.Drain))
	hs.Set("socket", errors.New("stopping"))
	if l != nil {
		if err := l.Close(); err != nil {
			o.Logger.Warn("closing the socket", slog.String("error", err.Error()))
		}
	}
	<-acceptDone
	httpDrained := make(chan struct{})
	go func() {
		defer close(httpDrained)
		if web != nil {
			web.stop(o.Drain, o.Logger)
		}
	}()
	ss.drain(cutSessions)
	<-httpDrained
	if why := exe.StopReason(); why != "" {
		return fmt.Errorf("%w: %s", sidecar.ErrStopped, why)
	}
	return nil
}

// watch reports on the health endpoints what happens to the executor until ctx ends. When it stops
// taking calls, serve says so on both endpoints, drains as after SIGTERM (stop) and exits non-zero: the
// pod restarts it and the next start writes the receipts the copy holds. A full book takes no new call:
// readiness says why, the process stays live (a restart would not help).
func watch(ctx context.Context, exe *sidecar.Executor, hs *socket.Health, stop context.CancelFunc) {
	go func() {
		select {
		case <-exe.Stopped():
			why := errors.New("the executor takes no more calls: " + exe.StopReason())
			hs.Set("executor", why)
			hs.SetDead(why)
			stop()
		case <-ctx.Done():
		}
	}()
	go func() {
		select {
		case <-exe.BookFull():
			hs.Set("book", errors.New(exe.BookFullReason()))
		case <-ctx.Done():
		}
	}()
}

// listen opens the socket and the HTTP endpoint the options name (either may be nil).
func listen(ctx context.Context, o ServeOptions, exe *sidecar.Executor, slots *Slots) (*net.UnixListener, *httpServing, error) {
	var l *net.UnixListener
	if o.SocketPath != "" {
		var err error
		if l, err = socket.Listen(o.SocketPath); err != nil {
			return nil, nil, err
		}
		o.Logger.Info("listening", slog.String("socket", o.SocketPath))
	}
	if o.HTTP == nil {
		return l, nil, nil
	}
	web, err := startHTTP(ctx, o, exe, slots)
	if err != nil {
		if l != nil {
			_ = l.Close() // not serving: the socket goes
		}
		return nil, nil, err
	}
	return l, web, nil
}

// startHealth serves the health endpoint at o.HealthAddr, when one is named, until ctx ends.
func startHealth(ctx context.Context, o ServeOptions, hs *socket.Health) error {
	if o.HealthAddr == "" {
		return nil
	}
	addr, errc, err := socket.ServeHealth(ctx, o.HealthAddr, hs)
	if err != nil {
		return err
	}
	o.Logger.Info("health endpoint", slog.String("address", addr.String()))
	go func() {
		if err := <-errc; err != nil {
			o.Logger.Error("health endpoint stopped", slog.String("error", err.Error()))
		}
	}()
	return nil
}

// sessions are the connections serve runs, each a session of its own with its own tool server.
type sessions struct {
	o     ServeOptions
	exe   *sidecar.Executor
	slots *Slots

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
				ss.o.Logger.Error("accepting a connection", slog.String("error", err.Error()))
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
		sc := socket.NewConn(conn, ss.o.WriteTimeout)
		ss.mu.Lock()
		if !ss.slots.TryTake() {
			ss.mu.Unlock()
			ss.o.Logger.Warn("session refused: --max-sessions are running", append(attrs, slog.Int("max_sessions", ss.o.MaxSessions))...)
			go refuseSession(sc, ss.o.MaxSessions)
			continue
		}
		ss.conns[sc] = struct{}{}
		ss.mu.Unlock()
		ss.o.Logger.Info("session opened", attrs...)
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
		ss.slots.Give()
		_ = conn.Close() // the session is over: nothing is left to send on it
	}()
	err := ss.exe.Serve(ctx, conn, conn, ss.o.Stderr)
	if code, ok := sidecar.IsExit(err); ok {
		ss.o.Logger.Info("session ended: the tool server exited", slog.Int("session", n), slog.Int("code", code))
	} else if err != nil && !errors.Is(err, context.Canceled) {
		ss.o.Logger.Warn("session ended", slog.Int("session", n), slog.String("error", err.Error()))
	} else {
		ss.o.Logger.Info("session ended", slog.Int("session", n))
	}
}

// drain ends every session's input, so that the calls already sent finish and get their receipts, and
// waits up to o.Drain for the sessions to end; then it cuts those left (cut ends their context).
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
	case <-time.After(ss.o.Drain):
		ss.o.Logger.Warn("drain budget spent: cutting the sessions left; their sent calls still get receipts")
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
