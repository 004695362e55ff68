// Package held is a tool call held for a person's approval, whichever
// way the approval comes: a tool rule's "approve" (asked in the queue
// folder, of the agent's client by elicitation or input_required, of a
// Kubernetes ApprovalRequest) or the slip's own approval, signed with the
// person's passkey on their page.
//
// A [Call] is one held call: its place among the slip's limits while it
// waits (book.Held), the end of its wait, and the approval.Call the hub
// holds it as. Its wait at the hub ends in one [Verdict]: send it (with
// the answer that lets it through: the executor.approval detail of a
// rule's approval, or the person's signed approval for the stub's line),
// refuse it (the denial's reason, codes and text), answer that it is
// still pending, or its wait ended without an answer. The engine admits
// every approved call the same way, whichever channel approved it.
//
// Beside the call: [Holds], every call held in the process and the slip's
// cancellation, which ends their waits at once; [Client], the agent's
// client as a channel (what its initialize declared, the executor's own
// elicitation requests); [OpenApprovals], the hub and its channels; and
// [Kept], the approval of an approved call kept in the queue folder from
// just before it is sent until its stub is in the book.
package held
