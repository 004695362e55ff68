// Package front is how clients reach the engine: [RunStdio] runs one
// session over standard input and output (`mcp-executor stdio`), and
// [ServeSocket] one session per connection on a Unix socket
// (`mcp-executor serve`: at most MaxSessions at once, SIGTERM drains them,
// health and metrics on their own address; package socket holds the
// socket, the bridge to it and the health endpoints). Each hands its
// client to the engine (sidecar.Executor.Serve, a sidecar.ClientConn of
// lines); the streamable-HTTP front is a ClientConn of its own, here too.
package front
