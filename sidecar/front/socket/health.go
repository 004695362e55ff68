package socket

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// Health answers /healthz (the process is serving) and /readyz (every readiness check passes) on a TCP
// address of its own, never on the protocol's socket. Its answers name the checks, never a secret.
type Health struct {
	mu     sync.Mutex
	checks map[string]error // name → nil when ready
	order  []string
	dead   error // set by SetDead: /healthz fails too
	// Metrics, when set before the endpoint is served, answers GET /metrics.
	Metrics http.Handler
}

// SetDead says the process is no longer of use (the executor stopped taking calls): /healthz and
// /readyz both answer 503 with why, so that Kubernetes restarts the container.
func (h *Health) SetDead(why error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.dead = why
}

// Live reports whether the process is of use, and why not.
func (h *Health) Live() (bool, string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.dead != nil {
		return false, h.dead.Error()
	}
	return true, ""
}

// NewHealth returns a Health whose named checks all start as not ready.
func NewHealth(names ...string) *Health {
	h := &Health{checks: map[string]error{}}
	for _, n := range names {
		h.checks[n] = errors.New("not yet done")
		h.order = append(h.order, n)
	}
	return h
}

// Set records the state of one check: nil means ready.
func (h *Health) Set(name string, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.checks[name]; !ok {
		h.order = append(h.order, name)
	}
	h.checks[name] = err
}

// Ready reports whether every check passes, and the state of each.
func (h *Health) Ready() (bool, map[string]string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ok := h.dead == nil
	states := make(map[string]string, len(h.checks)+1)
	if h.dead != nil {
		states["live"] = h.dead.Error()
	}
	for _, n := range h.order {
		if err := h.checks[n]; err != nil {
			ok = false
			states[n] = err.Error()
		} else {
			states[n] = "ok"
		}
	}
	return ok, states
}

// Handler serves /healthz and /readyz.
func (h *Health) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if ok, why := h.Live(); !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, "not live:", why)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		ok, states := h.Ready()
		w.Header().Set("Content-Type", "application/json")
		if !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"ready": ok, "checks": states})
	})
	if h.Metrics != nil {
		mux.Handle("GET /metrics", h.Metrics)
	}
	return mux
}

// ServeHealth listens on addr (host:port; ":8081" for every address of the pod) and serves h until
// ctx ends. It returns the bound address once listening, and reports a failure to serve on errc.
func ServeHealth(ctx context.Context, addr string, h *Health) (net.Addr, <-chan error, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("health endpoint %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h.Handler(), ReadHeaderTimeout: 5 * time.Second}
	errc := make(chan error, 1)
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("health endpoint %s: %w", addr, err)
		}
		close(errc)
	}()
	context.AfterFunc(ctx, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	})
	return l.Addr(), errc, nil
}
