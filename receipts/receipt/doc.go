// Package receipt holds what the executor writes into Provared records of
// its own: the labels of the documents a stub names in its details, the
// fixed texts whose fingerprints stand for what the executor cannot bind,
// the agent.software name under which a slip states the rules on content,
// and the typed builders of the two records the executor signs: a call's
// stub with its countersignature ([StubFields.Sign]) and a denial
// ([DenialFields.Sign]), each one book line. A helper agent's call under a
// pass (§25) has the same stub with the pass named (StubFields.Pass),
// signed with the helper's keys, in the pass's own chain.
//
// It knows nothing of MCP: the engine (package sidecar) hands it fields,
// the copy (package copylog) and the reports read its labels.
package receipt
