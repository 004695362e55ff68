package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/seed-6e06167c/mcp-executor/sidecar/boot"
	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
	"github.com/seed-6e06167c/mcp-executor/sidecar/toolserver"
)

// This file starts the tool servers of "servers": each stdio server a
// child in its own process group with its own environment and credentials
// (as the single "server" is), each HTTP server a streamable-HTTP
// connection with its headers read from their secret sources; and reads
// their credentials.

// startAll starts every server of "servers", in the settings' order. If
// one cannot start, those already started are stopped.
func startAll(ctx context.Context, set *settings.Settings, stderr io.Writer, log *slog.Logger) ([]*namedServer, error) {
	var ups []*namedServer
	for _, name := range set.ServerOrder {
		srv, err := Start(ctx, set, name, stderr, log)
		if err != nil {
			for _, u := range ups {
				_ = u.srv.Stop(context.WithoutCancel(ctx))
			}
			return nil, err
		}
		ups = append(ups, &namedServer{name: name, srv: srv})
	}
	return ups, nil
}

// Start starts the server name of the settings' "servers" (or the single
// "server" when name is ""): a child process, or a streamable-HTTP
// connection. The tools command uses it too.
func Start(ctx context.Context, set *settings.Settings, name string, stderr io.Writer, log *slog.Logger) (Server, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if stderr == nil {
		stderr = os.Stderr
	}
	srv := &set.Server
	if name != "" {
		u, ok := set.Servers[name]
		if !ok {
			return nil, fmt.Errorf("no tool server %q in the settings", name)
		}
		if u.HTTP != nil {
			headers, err := resolveVars(ctx, set, u.HTTP.Headers, log)
			if err != nil {
				return nil, fmt.Errorf("tool server %s: the headers: %w", name, err)
			}
			h := startHTTPUpstream(u.HTTP.URL, u.HTTP.Headers, headers, log.With(slog.String("server", name)))
			log.Info("tool server connected", slog.String("server", name), slog.String("url", u.HTTP.URL))
			return h, nil
		}
		srv = u.Stdio
	}
	env, err := resolveVars(ctx, set, srv.Env, log)
	if err != nil {
		return nil, fmt.Errorf("%s: the credentials: %w", strings.TrimSpace("tool server "+name), err)
	}
	p, err := toolserver.Start(context.WithoutCancel(ctx), toolserver.Spec{
		Command: srv.Command, Args: srv.Args, Dir: srv.Cwd, Path: srv.Path,
		Env: env, PassEnv: srv.PassEnv, Stderr: stderr, ShutdownWait: set.ShutdownWait,
	})
	if err != nil {
		if name != "" {
			return nil, fmt.Errorf("tool server %s: %w", name, err)
		}
		return nil, err
	}
	for _, w := range p.Warnings {
		log.Warn("tool server", slog.String("server", name), slog.String("warning", w))
	}
	log.Info("tool server started", slog.String("server", name), slog.String("program", p.Path), slog.Int("pid", p.Pid()))
	return newProcessServer(p), nil
}

// resolveVars reads the values of vars: those written in the settings, and
// those from their sources (files, the environment, Vault, Kubernetes).
func resolveVars(ctx context.Context, set *settings.Settings, vars []settings.EnvVar, log *slog.Logger) (map[string]string, error) {
	sources := map[string]string{}
	out := map[string]string{}
	for _, v := range vars {
		if v.IsValue {
			out[v.Name] = v.Value
		} else {
			sources[v.Name] = v.Source
		}
	}
	if len(sources) == 0 {
		return out, nil
	}
	kopts, closeKeys, err := boot.KeyOptions(set, log)
	if err != nil {
		return nil, err
	}
	vals, err := boot.ReadSecrets(ctx, sources, set.Dir, kopts)
	err = errors.Join(err, closeKeys())
	if err != nil {
		return nil, err
	}
	for k, v := range vals {
		out[k] = v
	}
	return out, nil
}

// CheckCredentials reads every tool server's credentials and headers once,
// so that a start that would fail on them writes nothing.
func CheckCredentials(ctx context.Context, set *settings.Settings, log *slog.Logger) error {
	if set.Servers == nil {
		_, err := serverEnv(ctx, set, log)
		return err
	}
	for _, name := range set.ServerOrder {
		u := set.Servers[name]
		vars := []settings.EnvVar(nil)
		what := "credentials"
		if u.HTTP != nil {
			vars, what = u.HTTP.Headers, "headers"
		} else {
			vars = u.Stdio.Env
		}
		if _, err := resolveVars(ctx, set, vars, log); err != nil {
			return fmt.Errorf("tool server %s: the %s: %w", name, what, err)
		}
	}
	return nil
}

// serverEnv resolves the single tool server's environment: the values the
// settings hold and the credentials read from their sources. Each session
// reads them again, so a rotated credential is picked up.
func serverEnv(ctx context.Context, set *settings.Settings, log *slog.Logger) (map[string]string, error) {
	env, err := resolveVars(ctx, set, set.Server.Env, log)
	if err != nil {
		return nil, fmt.Errorf("the tool server's credentials: %w", err)
	}
	return env, nil
}
