package front

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/seed-6e06167c/mcp-executor/keys"
	"github.com/seed-6e06167c/mcp-executor/sidecar"
	"github.com/seed-6e06167c/mcp-executor/sidecar/boot"
	"github.com/seed-6e06167c/mcp-executor/sidecar/front/streamhttp"
	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
)

// HTTPOptions are serve's streamable HTTP endpoint.
type HTTPOptions struct {
	URL          string   // http://HOST:PORT/PATH
	TokenSource  string   // the bearer tokens: a key source (a file path, env:, vault:, secret:); "" for none
	AllowedHosts []string // Host values taken beside the listen address's own names
	PoolSize     int      // executor sessions serving 2026-07-28 requests, per token (0: the default)
	SessionIdle  time.Duration
}

// Slots bounds the executor sessions every front runs together (serve's --max-sessions): the socket's
// connections and the HTTP endpoint's sessions take from the same slots.
type Slots struct {
	mu   sync.Mutex
	max  int
	used int
}

// TryTake takes a slot; false when none is free.
func (s *Slots) TryTake() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.used >= s.max {
		return false
	}
	s.used++
	return true
}

// Give returns a slot.
func (s *Slots) Give() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.used--
}

// httpServing is a running HTTP endpoint.
type httpServing struct {
	front *streamhttp.Front
	srv   *http.Server
	done  chan error
}

// readTokens reads the bearer tokens from their source, with the Vault and Kubernetes clients the
// settings name.
func readTokens(ctx context.Context, config, source string, log *slog.Logger) (*streamhttp.Tokens, error) {
	set, _, err := settings.Load(config)
	if err != nil {
		return nil, err
	}
	kopts, closeClients, err := boot.KeyOptions(set, log)
	if err != nil {
		return nil, err
	}
	defer func() { _ = closeClients() }() // the tokens are read; the clients are not needed after
	src, err := keys.ParseSource(source, "", kopts)
	if err != nil {
		return nil, fmt.Errorf("the bearer tokens: %w", err)
	}
	text, err := src.Read(ctx)
	if err != nil {
		return nil, fmt.Errorf("the bearer tokens: %w", err)
	}
	ts, err := streamhttp.ParseTokens(text)
	if err != nil {
		return nil, fmt.Errorf("the bearer tokens in %s: %w", src.Name(), err)
	}
	return ts, nil
}

// startHTTP serves the HTTP endpoint for exe until stop.
func startHTTP(ctx context.Context, o ServeOptions, exe *sidecar.Executor, slots *Slots) (*httpServing, error) {
	u, err := streamhttp.ParseListen(o.HTTP.URL)
	if err != nil {
		return nil, err
	}
	var tokens *streamhttp.Tokens
	if o.HTTP.TokenSource != "" {
		if tokens, err = readTokens(ctx, o.ConfigPath, o.HTTP.TokenSource, o.Logger); err != nil {
			return nil, err
		}
	}
	front, err := streamhttp.New(streamhttp.Options{
		Engine: exe, Listen: u, Tokens: tokens, AllowedHosts: o.HTTP.AllowedHosts,
		MaxSessions: o.MaxSessions, Slots: slots, PoolSize: o.HTTP.PoolSize, WriteTimeout: o.WriteTimeout,
		SessionIdle: o.HTTP.SessionIdle, ServerStderr: o.Stderr, Logger: o.Logger,
	})
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", u.Host)
	if err != nil {
		front.Close()
		return nil, fmt.Errorf("listening on %s: %w", u.Host, err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	if err := front.SetPort(port); err != nil {
		_ = l.Close() // not serving: the listener goes
		front.Close()
		return nil, err
	}
	hs := &httpServing{front: front, srv: front.Server(), done: make(chan error, 1)}
	addr := *u
	addr.Host = net.JoinHostPort(u.Hostname(), port)
	go func() {
		err := hs.srv.Serve(l)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		hs.done <- err
	}()
	o.Logger.Info("listening", slog.String("http", addr.String()), slog.Bool("bearer_tokens", tokens != nil))
	return hs, nil
}

// stop drains the HTTP sessions within budget (their sent calls finish and get receipts; answers still
// go to the clients there), then closes the server.
func (hs *httpServing) stop(budget time.Duration, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	hs.front.Drain(ctx)
	// What the drain wrote has gone out; connections still open have nothing more coming.
	shut, cancelShut := context.WithTimeout(context.Background(), time.Second)
	defer cancelShut()
	if err := hs.srv.Shutdown(shut); err != nil {
		_ = hs.srv.Close() // the rest are cut: nothing more is coming for them
	}
	hs.front.Close()
	if err := <-hs.done; err != nil {
		log.Warn("the HTTP endpoint", slog.String("error", err.Error()))
	}
}
