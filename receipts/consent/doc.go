// Package consent prepares and checks the person's passkey-signed answers
// to one executor: an approval of exactly one held call (format description,
// section 17) and a cancellation of a slip (section 22).
//
// Building the records is package slip's (PrepareApproval, Assemble,
// PrepareCancellation); this package binds them to what the executor knows:
// a held call as its stub will name it ([Proposal]), the slip it runs
// under, the approvals already used, and the time the stub will carry. It
// imports nothing of MCP.
package consent
