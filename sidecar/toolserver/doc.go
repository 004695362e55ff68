// Package toolserver starts and stops the MCP tool server the executor
// stands in front of.
//
// The server runs as a child in its own process group, with an environment
// of exactly the variables it is given (its credentials) and the pass-through
// variables present in the executor's environment: nothing else the agent's
// client put into the executor's environment reaches it. Its stdin and stdout
// are pipes the session uses; its stderr is copied line by line, each line
// prefixed and cut at a bound, to a writer of the caller's choice. On Linux it
// is killed when the executor dies (Pdeathsig); [Process.Stop] closes its
// input, waits, then sends SIGTERM and SIGKILL to the whole group.
//
// Limits: Pdeathsig fires when the OS thread that started the server ends,
// which in Go is the executor's exit unless the starting goroutine had locked
// its thread and exited (nothing here does). It reaches the server itself,
// not its descendants: a grandchild outlives a killed executor until its
// pipes close. Only Stop (or the context ending) kills the whole group.
package toolserver
