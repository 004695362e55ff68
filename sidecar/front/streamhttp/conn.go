package streamhttp

import (
	"context"
	"io"

	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// ClientConn is one client as an executor session sees it: the client's
// lines in, the lines for it out. It has the method set of the engine's own
// ClientConn.
type ClientConn interface {
	// ReadMessage returns the client's next line with its reading; a
	// *wire.Error for a line that is not acceptable; io.EOF at the end.
	ReadMessage() (line []byte, m *wire.Message, err error)
	// WriteLine hands the client a line. related is the id of the client's
	// request the line belongs to (its answer; the executor's own question
	// about that call); nil when the line belongs to none the engine knows.
	WriteLine(line, related []byte) error
}

// Engine runs executor sessions: the executor itself.
type Engine interface {
	// ServeConn starts a tool server and serves c until c's input ends or
	// the tool server exits. Every call that was sent has its stub in the
	// book before it returns.
	ServeConn(ctx context.Context, c ClientConn, serverStderr io.Writer) error
}
