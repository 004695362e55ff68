package streamhttp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/seed-6e06167c/mcp-executor/sidecar"
	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// Defaults of [Options].
const (
	DefaultMaxSessions       = 8
	DefaultPoolSize          = 2
	DefaultWriteTimeout      = 10 * time.Second
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultBodyTimeout       = 30 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultSessionIdle       = 30 * time.Minute
	DefaultKeepAlive         = 25 * time.Second
	// DefaultBufferBytes bounds what one session holds for its client:
	// events not yet written and those kept for a replay. Two of the
	// longest answers fit.
	DefaultBufferBytes = 2 * wire.MaxLine
	// MaxHeaderBytes bounds a request's header block.
	MaxHeaderBytes = 64 << 10
	// maxInflight bounds the requests one session has waiting for answers.
	maxInflight = 1024
	// maxKeptStreams bounds the answered streams a session keeps for a
	// replay.
	maxKeptStreams = 1024
	// standaloneBytes bounds what waits for a GET stream no client has
	// open: the oldest is dropped beyond it (those messages belong to no
	// request, and the server may send them without end).
	standaloneBytes = 1 << 20
	// retryMS is the reconnection delay the priming event asks for.
	retryMS = 1000
	// DefaultReplayKeep is how long a stream's events are kept for a replay after its answer was
	// written (a connection that broke after the write can still be resumed); until then the session's
	// buffer bounds them.
	DefaultReplayKeep = time.Minute
)

// Options are what a [Front] runs with.
type Options struct {
	// Engine serves the executor sessions. Required.
	Engine Engine
	// Listen is the endpoint's URL, from [ParseListen]. Required.
	Listen *url.URL
	// Tokens, when set, are the bearer tokens a request must carry. A
	// listen address other than loopback needs them.
	Tokens *Tokens
	// AllowedHosts are Host values taken beside the listen address's own
	// names (HOST or HOST:PORT).
	AllowedHosts []string
	// MaxSessions bounds the executor sessions running at once (each runs
	// a tool server): those of initialize and those kept for 2026-07-28
	// requests. DefaultMaxSessions when 0. With Slots, the sessions take
	// from those, shared with other fronts, and MaxSessions is what a
	// refusal says.
	MaxSessions int
	Slots       Slots
	// PoolSize is how many executor sessions serve 2026-07-28 requests,
	// per bearer token (one pool without tokens). DefaultPoolSize when 0.
	PoolSize int
	// WriteTimeout bounds one write to a client. DefaultWriteTimeout when 0.
	WriteTimeout time.Duration
	// ReadHeaderTimeout bounds reading a request's headers; BodyTimeout its
	// body; IdleTimeout a kept-alive connection between requests.
	ReadHeaderTimeout, BodyTimeout, IdleTimeout time.Duration
	// SessionIdle ends a session no request has used for this long.
	// DefaultSessionIdle when 0.
	SessionIdle time.Duration
	// KeepAlive is how often an open event stream gets a comment line.
	// DefaultKeepAlive when 0.
	KeepAlive time.Duration
	// BufferBytes bounds what one session holds for its client.
	// DefaultBufferBytes when 0.
	BufferBytes int
	// ReplayKeep is how long a stream is kept for a replay after its answer
	// was written. DefaultReplayKeep when 0.
	ReplayKeep time.Duration
	// ServerStderr takes the tool servers' standard error.
	ServerStderr io.Writer
	Logger       *slog.Logger
}

func (o *Options) fill() error {
	if o.Engine == nil || o.Listen == nil {
		return errors.New("streamhttp: Engine and Listen are required")
	}
	set := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	set(&o.WriteTimeout, DefaultWriteTimeout)
	set(&o.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	set(&o.BodyTimeout, DefaultBodyTimeout)
	set(&o.IdleTimeout, DefaultIdleTimeout)
	set(&o.SessionIdle, DefaultSessionIdle)
	set(&o.KeepAlive, DefaultKeepAlive)
	set(&o.ReplayKeep, DefaultReplayKeep)
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.PoolSize <= 0 {
		o.PoolSize = DefaultPoolSize
	}
	if o.BufferBytes <= 0 {
		o.BufferBytes = DefaultBufferBytes
	}
	if o.BufferBytes < wire.MaxLine+1024 {
		return fmt.Errorf("streamhttp: BufferBytes must hold the longest answer (%d bytes)", wire.MaxLine+1024)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Tokens == nil && !loopbackHost(o.Listen.Hostname()) {
		return fmt.Errorf("streamhttp: %s is not a loopback address: serving it needs bearer tokens (--token-file)", o.Listen.Host)
	}
	return nil
}

// Front is the streamable HTTP endpoint: an http.Handler.
type Front struct {
	o      Options
	log    *slog.Logger
	hosts  hostSet
	params toolParams // the tools' x-mcp-header annotations, from the tools/list answers seen

	ctx context.Context // the executor sessions'; cut ends it
	cut context.CancelFunc

	mu       sync.Mutex
	sessions map[[sha256.Size]byte]*session
	pools    map[[sha256.Size]byte]*pool
	running  int // executor sessions running
	draining bool
	wg       sync.WaitGroup // executor sessions
	stop     chan struct{}  // closed by Close: ends the idle reaper
	stopOnce sync.Once
}

// New makes a Front. Its executor sessions run until [Front.Drain] or
// [Front.Close].
func New(o Options) (*Front, error) {
	if err := o.fill(); err != nil {
		return nil, err
	}
	hosts, err := newHostSet(o.Listen, o.Listen.Port(), o.AllowedHosts)
	if err != nil {
		return nil, err
	}
	ctx, cut := context.WithCancel(context.Background())
	f := &Front{o: o, log: o.Logger, hosts: hosts, ctx: ctx, cut: cut,
		sessions: map[[sha256.Size]byte]*session{}, pools: map[[sha256.Size]byte]*pool{}, stop: make(chan struct{})}
	go f.reapIdle()
	return f, nil
}

// SetPort takes the port the listener got (for a listen address with port
// 0): the Host and Origin a request may carry name it.
func (f *Front) SetPort(port string) error {
	hosts, err := newHostSet(f.o.Listen, port, f.o.AllowedHosts)
	if err != nil {
		return err
	}
	f.mu.Lock()
	f.hosts = hosts
	f.mu.Unlock()
	return nil
}

// Server is an http.Server for f with its timeouts: headers, bodies (read
// deadlines set per request), idle connections, header size.
func (f *Front) Server() *http.Server {
	return &http.Server{
		Handler:           f,
		ReadHeaderTimeout: f.o.ReadHeaderTimeout,
		IdleTimeout:       f.o.IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(f.log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.Background() },
	}
}

// Sessions is how many executor sessions run.
func (f *Front) Sessions() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.running
}

// Drain takes no new session or request, ends every session's input (each
// sent call still gets its outcome and receipt, its answer written when its
// client is there) and waits for the sessions until ctx ends; then it cuts
// those left and waits for them to end.
func (f *Front) Drain(ctx context.Context) {
	for _, in := range f.inboxes(true) {
		in.close()
	}
	done := make(chan struct{})
	go func() { f.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		f.log.Warn("drain budget spent: cutting the HTTP sessions left; their sent calls still get receipts")
		f.cut()
		<-done
	}
}

// Close cuts every session and waits for them to end (Drain first lets
// them finish their calls).
func (f *Front) Close() {
	f.stopOnce.Do(func() { close(f.stop) })
	for _, in := range f.inboxes(true) {
		in.close()
	}
	f.cut()
	f.wg.Wait()
}

// inboxes are the inputs of every session; draining, when set, takes no
// new session from now on.
func (f *Front) inboxes(draining bool) []*inbox {
	f.mu.Lock()
	defer f.mu.Unlock()
	if draining {
		f.draining = true
	}
	var ins []*inbox
	for _, s := range f.sessions {
		ins = append(ins, s.in)
	}
	for _, p := range f.pools {
		for _, m := range p.members {
			if m != nil {
				ins = append(ins, m.in)
			}
		}
	}
	return ins
}

// reapIdle ends the sessions no request has used for SessionIdle.
func (f *Front) reapIdle() {
	every := min(f.o.SessionIdle/4, f.o.ReplayKeep/4)
	if every < 100*time.Millisecond {
		every = 100 * time.Millisecond
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-f.stop:
			return
		case <-t.C:
		}
		now := time.Now()
		f.mu.Lock()
		var idle []*inbox
		for _, s := range f.sessions {
			s.sweep(now)
			if s.idleSince(now) >= f.o.SessionIdle {
				idle = append(idle, s.in)
				s.log.Info("the session was not used for a while and ends", slog.Duration("idle", f.o.SessionIdle))
			}
		}
		for _, p := range f.pools {
			for _, m := range p.members {
				if m != nil && m.idleSince(now) >= f.o.SessionIdle {
					idle = append(idle, m.in)
				}
			}
		}
		f.mu.Unlock()
		for _, in := range idle {
			in.close()
		}
	}
}

// startEngine runs one executor session for c; ended is called when it
// returns. The caller reserved its slot (f.running).
func (f *Front) startEngine(c sidecar.ClientConn, log *slog.Logger, ended func(error)) {
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		err := f.o.Engine.ServeConn(f.ctx, c, f.o.ServerStderr)
		switch {
		case err == nil, errors.Is(err, context.Canceled):
			log.Info("executor session ended")
		default:
			log.Warn("executor session ended", slog.String("error", err.Error()))
		}
		ended(err)
		f.mu.Lock()
		f.running--
		f.mu.Unlock()
		if f.o.Slots != nil {
			f.o.Slots.Give()
		}
	}()
}

// reserve takes a slot for a new executor session; the error says why
// there is none.
func (f *Front) reserveLocked() error {
	switch {
	case f.draining:
		return errDraining
	case f.o.Slots == nil && f.running >= f.o.MaxSessions, f.o.Slots != nil && !f.o.Slots.TryTake():
		return errFull{max: f.o.MaxSessions}
	}
	f.running++
	return nil
}

var errDraining = errors.New("not taken: the executor is stopping")

type errFull struct{ max int }

func (e errFull) Error() string {
	return fmt.Sprintf("not taken: the executor already runs %d sessions (serve --max-sessions); try again when one has ended", e.max)
}

// refuseStart answers a request for which no executor session could start.
func refuseStart(w http.ResponseWriter, id []byte, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", "5")
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = w.Write(errorBody(id, wire.CodeNotTaken, err.Error())) // the client may be gone; nothing to do then
}

// shortID is what a log may say of a secret id: 8 hex digits of its SHA-256.
func shortID(sum [sha256.Size]byte) string { return hex.EncodeToString(sum[:4]) }

// ServeHTTP checks what every request must pass, then serves it by method.
func (f *Front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != f.o.Listen.Path || r.URL.RawQuery != "" {
		refuse(w, http.StatusNotFound, 0, "not found: the MCP endpoint is "+f.o.Listen.Path)
		return
	}
	if err := checkHeaderNames(r.Header); err != nil {
		refuse(w, http.StatusBadRequest, 0, err.Error())
		return
	}
	for _, name := range readHeaders {
		inner := name == "Authorization" || name == "Accept" || name == "Content-Type" || name == headerName
		if _, _, err := readOne(r.Header, name, inner); err != nil {
			refuse(w, http.StatusBadRequest, 0, err.Error())
			return
		}
	}
	f.mu.Lock()
	hosts := f.hosts
	f.mu.Unlock()
	if !hosts.host(r.Host) {
		f.log.Warn("a request naming another host is refused", slog.String("method", r.Method))
		refuse(w, http.StatusForbidden, 0, "forbidden: the Host header names another site than this endpoint")
		return
	}
	if origin, present, _ := readOne(r.Header, "Origin", false); present && !hosts.origin(origin) {
		f.log.Warn("a request from another origin is refused", slog.String("method", r.Method))
		refuse(w, http.StatusForbidden, wire.CodeInvalidRequest, "forbidden: the Origin header names another site than this endpoint")
		return
	}
	var tok [sha256.Size]byte
	if f.o.Tokens != nil {
		t, present, err := bearer(r.Header)
		var ok bool
		if err == nil && present {
			tok, ok = f.o.Tokens.match(t)
		}
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcp-executor"`)
			refuse(w, http.StatusUnauthorized, wire.CodeInvalidRequest, "unauthorized: this endpoint needs one of its bearer tokens")
			return
		}
	}
	switch r.Method {
	case http.MethodPost:
		f.post(w, r, tok)
	case http.MethodGet:
		f.get(w, r, tok)
	case http.MethodDelete:
		f.delete(w, r, tok)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		refuse(w, http.StatusMethodNotAllowed, 0, "method not allowed")
	}
}
