// Package sidecar is the executor's engine: it stands between an agent's
// MCP client and its MCP tool servers, passes every message that is not a
// tool call through unchanged (under ids of its own towards the server),
// and judges every tools/call against the person's signed permission (the
// slip) before anything reaches the server, and records it.
//
// One [Executor] serves a process ([Open]: settings, the agent's and the
// executor's keys, the slip, the book with its check before acting, the
// copy, the rules on content, recovery at start); each agent connection is
// a [Session] with its own tool servers ([Executor.ServeConn], the client
// reached by any transport through a [ClientConn]; [Executor.Serve] for
// lines on a reader and a writer).
//
// The engine knows no transport. How clients reach it (stdio, the Unix
// socket) is sidecar/front; the tool servers behind it (a process, an HTTP
// connection, the router) are sidecar/upstream, which take each line with
// its reading; a call held for approval is a sidecar/held call; its spans
// and metrics are sidecar/telemetry's; the tool rules, quotas and
// redaction sidecar/policy's.
//
// # The call path
//
// A tools/call goes through, in order: the tool-name form (else JSON-RPC
// error -32602); the rule for the tool by its exact name (an unlisted tool
// is refused, or sent on with no record when unlisted is "forward"); the
// amount (fixed, the whole number at a pointer, or the length of a list);
// the rules on content; the check before acting with the book's ledger,
// which counts the calls still in flight; a "sent" line in the copy,
// fsynced; the call to the server under the executor's own id (with
// params._meta["red.prova/call-id"] when callIdInMeta). Its outcome
// (result, JSON-RPC error, timeout, the client's cancellation, the server
// ending) becomes a stub signed with the agent's keys and countersigned with
// the executor's keys, on one book line, fsynced; then the copy's "receipt"
// line; then the client gets the server's own bytes with its id spliced in.
// Stubs enter the book in the order the calls were reserved and sent; a
// call's answer reaches the client only once its stub is durable. Calls in
// flight together (up to maxWaiting) share their fsyncs.
//
// # Answers of the executor's own
//
//	1001    not taken: too many calls waiting, the copy could not be written,
//	        or the executor is stopped; nothing was sent or written
//	1002    no answer (timeout, cancellation, the server ended); data is
//	        {"red.prova/stub": <the stub's fingerprint>}
//	-32603  the receipt could not be written to the book; the copy holds a
//	        not-written line and the next start writes the receipt
//	-32602  a tool name that is not 1 to 128 of A-Z a-z 0-9 _ - .
//	-32700, -32600  a line that is not an acceptable message (package wire)
//
// A refused call is never sent. The model gets a tool result with isError
// true, text beginning "Not taken by the executor:" and _meta holding
// red.prova/refused (the denial's reason, or the executor's own code:
// unlisted, amount-unreadable, duplicate-member, content-rule,
// content-unreadable, arguments-unreadable), red.prova/codes,
// red.prova/denial (the denial's fingerprint, when one was written) and,
// for a content rule, red.prova/rule. The denial is a Provared refusal
// signed by the executor's keys, at most denialsPerHour in any hour.
//
// # Labels
//
// A stub's details name what the executor knows, each the SHA-256
// (base64url) of a document (the labels and the stub and denial builders
// are in package receipts/receipt; the start-up loader is sidecar/boot,
// and the check, compare and keys reports are sidecar/report):
//
//	provared.arguments     the call's arguments, RFC 8785 ({} where there are none)
//	provared.tool-name     the tool's name as UTF-8 text
//	executor.call          the executor's own call id (the id sent to the server)
//	provared.request-id    the JSON-RPC id sent to the server (the same text)
//	provared.trace-id      the trace id of a well-formed traceparent in _meta
//	executor.rules         (already a fingerprint) the rules on content in force
//	provared.tool-result   the server's whole result, RFC 8785
//	provared.error         otherwise: the error text the client got, or the server's error
//	executor.written-late  a fixed text: the receipt was written at a restart
//
// # Recovery at start
//
// A call the copy shows as sent with no receipt gets its stub at the next
// start, dated when it was sent and countersigned now, naming the outcome
// the copy holds (a not-written line) or provared.error with
// receipt.TextStoppedWhileSent, and executor.written-late. It is never sent
// again. A call sent under another slip stops the start.
package sidecar
