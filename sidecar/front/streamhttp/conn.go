package streamhttp

import (
	"context"
	"io"

	"github.com/seed-6e06167c/mcp-executor/sidecar"
)

// Engine runs executor sessions: the executor itself ([sidecar.Executor]).
type Engine interface {
	// ServeConn starts the tool servers and serves c until c's input ends
	// or a tool server exits. Every call that was sent has its stub in the
	// book before it returns.
	ServeConn(ctx context.Context, c sidecar.ClientConn, serverStderr io.Writer) error
}

// Slots bounds the executor sessions of every front together (serve's
// --max-sessions); nil: the front counts its own against MaxSessions.
type Slots interface {
	TryTake() bool // takes a slot; false when none is free
	Give()         // returns one
}
