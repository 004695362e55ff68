package cli

import (
	"context"
	"errors"
	"io"
	"log/slog"

	"github.com/seed-6e06167c/mcp-executor/sidecar"
	"github.com/seed-6e06167c/mcp-executor/sidecar/front/streamhttp"
	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// TEMPORARY, until the engine has ServeConn (branch rooms): an executor session over a ClientConn,
// run by today's Serve over two pipes. Lines go in with a line feed; each line out is handed on with
// its id as the related request when it is an answer (the engine's own question about a held call
// has no related id here).
type pipeEngine struct {
	e   *sidecar.Executor
	log *slog.Logger
}

func engineOf(e *sidecar.Executor) streamhttp.Engine { return pipeEngine{e: e} }

func (p pipeEngine) ServeConn(ctx context.Context, c streamhttp.ClientConn, serverStderr io.Writer) error {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() {
		for {
			line, _, err := c.ReadMessage()
			if err != nil {
				_ = inW.Close() // the session's input ends
				return
			}
			if _, err := inW.Write(append(line, '\n')); err != nil {
				return
			}
		}
	}()
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		r := wire.NewReader(outR)
		for {
			line, err := r.ReadLine()
			if err != nil {
				var tl *wire.TooLongError
				if errors.As(err, &tl) {
					continue
				}
				_ = outR.Close()
				return
			}
			var related []byte
			if m, err := wire.Inspect(line); err == nil && m.Kind == wire.KindResponse {
				related = m.ID
			}
			_ = c.WriteLine(line, related) // a client cut off: the session goes on to its end without it
		}
	}()
	err := p.e.Serve(ctx, inR, outW, serverStderr)
	_ = outW.Close()
	_ = inR.Close()
	<-copied
	return err
}
