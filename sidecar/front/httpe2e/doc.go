// Package httpe2e holds tests only: the real binary's `serve --listen
// http://...` with real clients of both protocol eras (the TypeScript SDKs,
// go-sdk's streamable client), the MCP conformance suite in front of go-sdk's
// conformance server, and hostile HTTP clients.
package httpe2e
