// Package sidecar is the executor itself: it stands between an agent's MCP
// client and one MCP tool server, passes every message that is not a tool
// call through unchanged (under ids of its own towards the server), and
// judges every tools/call against the person's signed permission (the slip)
// before anything reaches the server.
//
// # The call path
//
// An allowed call is written to the executor's own copy (fsynced) before it
// is sent; its outcome (result, JSON-RPC error, timeout, cancellation, server
// exit) becomes a Provared stub signed with the agent's keys and
// countersigned with the executor's keys, appended to the agent's book in the
// order the calls were sent; only then does the client get the server's own
// bytes with its id spliced back in. A refused call is never sent: the client
// gets a tool error beginning "Not taken by the executor:" and a signed denial
// goes to the book.
//
// One [Executor] serves a process (settings, keys, slip, book, copy); each
// agent connection is a [Session] with its own tool-server process.
// [RunStdio] runs one session over standard input and output.
//
// # Labels
//
// A stub's details name what the executor knows, each as the SHA-256
// (base64url) of a document; see the Label constants.
package sidecar
