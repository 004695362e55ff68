package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/seed-6e06167c/mcp-executor/keys"
	"github.com/seed-6e06167c/mcp-executor/sidecar"
	"github.com/seed-6e06167c/mcp-executor/sidecar/boot"
	"github.com/seed-6e06167c/mcp-executor/sidecar/front/streamhttp"
	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
)

// listenFlags collects serve's --listen values: at most one unix:PATH and one http://HOST:PORT/PATH.
type listenFlags []string

func (l *listenFlags) String() string { return strings.Join(*l, ",") }

func (l *listenFlags) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// split sorts the addresses into the socket path and the HTTP URL.
func (l listenFlags) split() (socketPath, httpURL string, err error) {
	for _, v := range l {
		switch {
		case strings.HasPrefix(v, "unix:"):
			if socketPath != "" {
				return "", "", errors.New("one unix: address at most")
			}
			socketPath = v
		case strings.HasPrefix(v, "http://"):
			if httpURL != "" {
				return "", "", errors.New("one http:// address at most")
			}
			httpURL = v
		default:
			return "", "", fmt.Errorf("%q: want unix:PATH or http://HOST:PORT/PATH", v)
		}
	}
	if socketPath == "" && httpURL == "" {
		return "", "", errors.New("--listen is required")
	}
	return socketPath, httpURL, nil
}

// httpOptions are serve's flags for the HTTP endpoint.
type httpOptions struct {
	url          string
	tokenFile    string   // a key source: a file path, env:, vault:, secret:
	allowedHosts []string // --allow-host
	poolSize     int
	sessionIdle  time.Duration
}

// httpServing is a running HTTP endpoint.
type httpServing struct {
	front *streamhttp.Front
	srv   *http.Server
	done  chan error
	url   string
}

// readTokens reads the bearer tokens from their source, with the Vault and Kubernetes clients the settings name.
func readTokens(ctx context.Context, config, source string, log *slog.Logger) (*streamhttp.Tokens, error) {
	set, _, err := settings.Load(config)
	if err != nil {
		return nil, err
	}
	kopts, closeClients, err := boot.KeyOptions(set, log)
	if err != nil {
		return nil, err
	}
	defer func() { _ = closeClients() }() // the token is read; the clients are not needed after
	src, err := keys.ParseSource(source, "", kopts)
	if err != nil {
		return nil, fmt.Errorf("--token-file: %w", err)
	}
	text, err := src.Read(ctx)
	if err != nil {
		return nil, fmt.Errorf("--token-file: %w", err)
	}
	ts, err := streamhttp.ParseTokens(text)
	if err != nil {
		return nil, fmt.Errorf("--token-file %s: %w", src.Name(), err)
	}
	return ts, nil
}

// startHTTP serves the HTTP endpoint for exe until stopHTTP.
func startHTTP(ctx context.Context, o serveOptions, exe *sidecar.Executor) (*httpServing, error) {
	u, err := streamhttp.ParseListen(o.http.url)
	if err != nil {
		return nil, fmt.Errorf("--listen: %w", err)
	}
	var tokens *streamhttp.Tokens
	if o.http.tokenFile != "" {
		if tokens, err = readTokens(ctx, o.config, o.http.tokenFile, o.log); err != nil {
			return nil, err
		}
	}
	front, err := streamhttp.New(streamhttp.Options{
		Engine: engineOf(exe), Listen: u, Tokens: tokens, AllowedHosts: o.http.allowedHosts,
		MaxSessions: o.maxSessions, PoolSize: o.http.poolSize, WriteTimeout: o.writeTimeout,
		SessionIdle: o.http.sessionIdle, ServerStderr: o.env.Stderr, Logger: o.log,
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
		_ = l.Close()
		front.Close()
		return nil, err
	}
	hs := &httpServing{front: front, srv: front.Server(), done: make(chan error, 1)}
	addr := *u
	addr.Host = net.JoinHostPort(u.Hostname(), port)
	hs.url = addr.String()
	go func() {
		err := hs.srv.Serve(l)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		hs.done <- err
	}()
	o.log.Info("listening", slog.String("http", hs.url), slog.Bool("bearer_tokens", tokens != nil))
	return hs, nil
}

// stopHTTP drains the HTTP sessions within budget (their sent calls finish and get receipts, answers
// still go to the clients there), then closes the server.
func (hs *httpServing) stop(budget time.Duration, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	hs.front.Drain(ctx)
	// Answers written during the drain have gone out; connections still open have nothing more coming.
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
