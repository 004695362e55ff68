// Package policy is the executor's own rules on tool calls, put together
// for the engine from its primitives, one concept per sub-package:
//
//   - [glob]: tool rules by exact name or glob over namespaced tool names, and
//     which rule decides a name when several match;
//   - [quota]: per-tool call quotas over sliding windows (per run, minute,
//     hour, day) with reserve/commit/release for calls still in the pipeline;
//   - [redact]: masking of secret-looking values in a JSON arguments document
//     or free text, with salted fingerprints an auditor can check.
//
// [Policy] is the settings' tool rules with their quotas and the redactor,
// its quota windows and redaction salt restored from the copy at start
// ([Seed], gathered during the copy's one read); [Denials] caps the
// denials written to the book in any hour. The codes of the refusals by
// rule (unlisted, refused-by-rule, quota) are here, where the reports read
// them too.
//
// [glob]: github.com/seed-6e06167c/mcp-executor/sidecar/policy/glob
// [quota]: github.com/seed-6e06167c/mcp-executor/sidecar/policy/quota
// [redact]: github.com/seed-6e06167c/mcp-executor/sidecar/policy/redact
package policy
