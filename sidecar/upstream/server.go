package upstream

import (
	"context"
	"io"
	"log/slog"
	"os"

	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
	"github.com/seed-6e06167c/mcp-executor/sidecar/toolserver"
	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// Server is one running tool server as a session sees it: it takes the
// session's lines with their reading, and gives the server's lines.
type Server interface {
	// Send hands the server one line (without its line feed) with m, its
	// reading (wire.Inspect's, or an edit's that kept it): a server that
	// acts on a line (the router, an HTTP server) acts on m and never
	// reads the line again. Lines are taken in the order they are sent.
	// It fails once the server takes no more lines (its input closed).
	Send(line []byte, m *wire.Message) error
	// Output is the server's lines, one JSON-RPC message each.
	Output() io.Reader
	// Stop closes the server's input, waits the settings' shutdownWait,
	// then ends its process group (SIGTERM, then SIGKILL); an HTTP server
	// ends its session. It may be called more than once.
	Stop(ctx context.Context) error
	// Wait waits for the server to end and returns its exit code.
	Wait() (int, error)
	// Done is closed when the server has ended.
	Done() <-chan struct{}
	// Close lets go of what the server holds (a process's pipes) once its
	// output has been read to its end; it stops the server first if it
	// still runs.
	Close(ctx context.Context) error
}

// Open starts the tool servers the settings name for one session: the
// single "server" as a child process, or every server of "servers" behind
// a router, in the settings' order. The servers live as long as the
// session, not ctx (the start-up's).
func Open(ctx context.Context, set *settings.Settings, stderr io.Writer, log *slog.Logger) (Server, error) {
	if set.Servers != nil {
		ups, err := startAll(ctx, set, stderr, log)
		if err != nil {
			return nil, err
		}
		return newRouter(set, log, ups), nil
	}
	return startSingle(ctx, set, stderr, log)
}

// startSingle starts the tool server the settings' "server" names, with
// its credentials and the passed-on environment only.
func startSingle(ctx context.Context, set *settings.Settings, stderr io.Writer, log *slog.Logger) (*processServer, error) {
	env, err := serverEnv(ctx, set, log)
	if err != nil {
		return nil, err
	}
	if stderr == nil {
		stderr = os.Stderr
	}
	// The server lives as long as the session, not the start-up context.
	p, err := toolserver.Start(context.WithoutCancel(ctx), toolserver.Spec{
		Command: set.Server.Command, Args: set.Server.Args, Dir: set.Server.Cwd, Path: set.Server.Path,
		Env: env, PassEnv: set.Server.PassEnv, Stderr: stderr, ShutdownWait: set.ShutdownWait,
	})
	if err != nil {
		return nil, err
	}
	for _, w := range p.Warnings {
		log.Warn("tool server", slog.String("warning", w))
	}
	log.Info("tool server started", slog.String("program", p.Path), slog.Int("pid", p.Pid()))
	return newProcessServer(p), nil
}

// processServer is a toolserver.Process as a Server: lines to its
// standard input, lines from its standard output.
type processServer struct {
	p  *toolserver.Process
	in *wire.Writer
}

func newProcessServer(p *toolserver.Process) *processServer {
	return &processServer{p: p, in: wire.NewWriter(p.Stdin)}
}

// Send writes the line to the process's standard input; the process reads
// it itself.
func (s *processServer) Send(line []byte, _ *wire.Message) error { return s.in.WriteLine(line) }
func (s *processServer) Output() io.Reader                       { return s.p.Stdout }
func (s *processServer) Stop(ctx context.Context) error          { return s.p.Stop(ctx) }
func (s *processServer) Wait() (int, error)                      { return s.p.Wait() }
func (s *processServer) Done() <-chan struct{}                   { return s.p.Done() }
func (s *processServer) Close(ctx context.Context) error         { return s.p.Close(ctx) }
