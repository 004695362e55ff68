// Package streamhttp is the executor's streamable HTTP front: an agent's MCP
// client reaches the executor at one URL (serve --listen
// http://127.0.0.1:8080/mcp), in either era of the protocol, chosen per
// request.
//
// # The 2025-11-25 era: sessions
//
// An initialize request without an Mcp-Session-Id starts a session: one
// executor session, as a connection to the Unix socket is, with its own tool
// server, judging, copy lines, stubs, holds and drain. Its id is 32 bytes
// from crypto/rand. A POST carrying a request is answered as JSON or as an
// event stream, as its Accept header allows (an event stream when both are);
// notifications and answers get 202. The GET stream carries what the server
// sends on its own; DELETE ends the session (the calls in flight still get
// their receipts). Every event has an id (stream-index); a GET with
// Last-Event-ID replays what followed it on that stream from a buffer each
// session bounds, and each event is written to one connection at a time, so
// a client that reconnects in the middle of a call gets its answer once.
//
// # The 2026-07-28 era: no session
//
// A request whose _meta or MCP-Protocol-Version header names 2026-07-28 or
// later is served on its own: it goes to one of a few executor sessions the
// front keeps for such requests (a pool per bearer token, each session's
// tool server started on first use), under an id of the front's own that is
// swapped back for the client's in the answer. Its progress token is swapped
// the same way. Mcp-Method and Mcp-Name must agree with the body, or the
// request is refused (HTTP 400, JSON-RPC -32020) before anything is judged.
// Closing the response cancels the request.
//
// # What every request passes first
//
// The path is the listen URL's; Host is one of the listen address's names
// (loopback names for a loopback address); an Origin, when present, names
// the same; a listen address other than loopback needs a bearer token
// (compared in constant time; a session is bound to the token that made
// it). Every header the front reads appears once, in its one spelling, with
// visible ASCII only. A body is one JSON-RPC message read as the line reader
// reads a line (16 MiB at most, no batch, no duplicate member, ...), within
// a read deadline.
package streamhttp
