// Package upstream is the tool servers behind the engine: a child process
// in its own process group on pipes (sidecar/toolserver), a server reached
// by MCP's streamable HTTP transport spoken as raw JSON-RPC (http.go), and
// the router that puts the servers of "servers" behind one session
// (router.go). Each is a [Server]: it takes the session's lines with their
// reading (Send), so that no line the session read is read again on its
// way, and gives the server's lines as they were written.
//
// [Open] starts what the settings name for one session; [Start] one server
// (the tools command lists each); [CheckCredentials] reads every server's
// credentials and headers once at start, so that a start that would fail
// on them writes nothing. It imports no engine.
package upstream
