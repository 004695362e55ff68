package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/seed-6e06167c/mcp-executor/sidecar/page"
)

func init() {
	extraCommands["page"] = command{
		summary: "serve the person's passkey page: register a passkey, sign a slip, approve held calls, cancel the slip",
		run:     runPage,
	}
}

// runPage is `mcp-executor page --config FILE [--listen 127.0.0.1:8443] [--origin URL] [--passkey FILE]
// [--new-passkey] [--code-ttl D]`: it serves the person's page until the context ends (SIGINT/SIGTERM).
// The page is meant for loopback: a listen address that is not loopback needs --origin (the page's
// address as the browser sees it, behind a TLS proxy).
//
// When no passkey is registered (or with --new-passkey, to replace the one registered), it prints a
// one-time registration code on its own standard error, and only there: the page registers a passkey
// only for whoever enters it, since anything else that reaches the port (in a pod, every container)
// could otherwise register its own key in the person's place.
func runPage(ctx context.Context, env Env, args []string) int {
	fs := newFlags(env, "page", "--config FILE [--listen 127.0.0.1:8443] [--origin URL] [--passkey FILE] [--new-passkey] [--code-ttl 15m]")
	config := fs.String("config", "", "the executor's settings `file` (JSON)")
	listen := fs.String("listen", page.DefaultListen, "the TCP `address` to listen on (loopback unless --origin is given; port 0 takes a free port)")
	origin := fs.String("origin", "", "the page's origin as the browser sees it (default http://localhost:PORT)")
	passkey := fs.String("passkey", "", "the page's passkey `file` (default page-passkey.json in the settings' folder; in a pod, a file on the executor's own volume)")
	newPasskey := fs.Bool("new-passkey", false, "print a registration code even though a passkey is registered, to replace it (the registered passkey must confirm)")
	codeTTL := fs.Duration("code-ttl", page.DefaultCodeTTL, "how long the registration code may start a registration")
	if code, done := parseFlags(fs, args); done {
		return code
	}
	if *config == "" || fs.NArg() != 0 {
		fmt.Fprintln(env.Stderr, "mcp-executor page: --config FILE is required")
		fs.Usage()
		return ExitUsage
	}
	if *codeTTL <= 0 || *codeTTL > 24*time.Hour {
		fmt.Fprintf(env.Stderr, "mcp-executor page: --code-ttl %s: give a duration above 0 and at most 24h\n", *codeTTL)
		return ExitUsage
	}
	host, _, err := net.SplitHostPort(*listen)
	if err != nil {
		fmt.Fprintf(env.Stderr, "mcp-executor page: --listen %q: %v\n", *listen, err)
		return ExitUsage
	}
	if ip := net.ParseIP(host); (ip == nil || !ip.IsLoopback()) && host != "localhost" && *origin == "" {
		fmt.Fprintf(env.Stderr, "mcp-executor page: --listen %s is not loopback; give --origin too (the page's https address behind your proxy)\n", *listen)
		return ExitUsage
	}
	if _, err := page.OriginFor(*listen); err != nil {
		fmt.Fprintf(env.Stderr, "mcp-executor page: %v\n", err)
		return ExitUsage
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(env.Stderr, "mcp-executor page: %v\n", err)
		return ExitFinding
	}
	defer func() { _ = ln.Close() }() // for the returns before Serve; after it, Serve has closed it
	// The origin comes from the port listened on, so that port 0 (any free
	// port, as the tests use) gives the page's true origin.
	if *origin == "" {
		if *origin, err = page.OriginFor(ln.Addr().String()); err != nil {
			fmt.Fprintf(env.Stderr, "mcp-executor page: %v\n", err)
			return ExitFinding
		}
	}
	log := newLogger(env.Stderr)
	srv, err := page.New(page.Options{ConfigPath: *config, Origin: *origin, Logger: log, PasskeyPath: *passkey})
	if err != nil {
		fmt.Fprintf(env.Stderr, "mcp-executor page: %v\n", err)
		return ExitFinding
	}
	reg, err := srv.Registered()
	if err != nil {
		fmt.Fprintf(env.Stderr, "mcp-executor page: the passkey file: %v\n", err)
		return ExitFinding
	}
	if reg == nil || *newPasskey {
		if err := printCode(env, srv, reg, *codeTTL); err != nil {
			fmt.Fprintf(env.Stderr, "mcp-executor page: %v\n", err)
			return ExitFinding
		}
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, WriteTimeout: time.Minute}
	log.Info("page: serving", slog.String("listen", ln.Addr().String()), slog.String("origin", *origin))
	fmt.Fprintf(env.Stderr, "mcp-executor page: open %s in the browser that holds your passkey\n", *origin)
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err = <-done:
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = hs.Shutdown(shut)
		cancel()
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(env.Stderr, "mcp-executor page: %v\n", err)
		return ExitFinding
	}
	return ExitOK
}

// printCode makes the page's one-time registration code and prints it on
// the command's own standard error, as text for the person: never into the
// log records, which may be collected elsewhere. reg is the passkey the
// code would replace; nil when none is registered.
func printCode(env Env, srv *page.Server, reg *page.Registered, ttl time.Duration) error {
	code, until, err := srv.IssueCode(ttl)
	if err != nil {
		return err
	}
	what := "register your passkey"
	if reg != nil {
		what = "replace the passkey " + reg.Thumbprint + " (which must confirm it)"
	}
	fmt.Fprintf(env.Stderr, "mcp-executor page: registration code %s\n  enter it on the page to %s; it works once, until %s, and is shown only here\n",
		code, what, until.UTC().Format(time.RFC3339))
	return nil
}
