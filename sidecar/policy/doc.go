// Package policy holds the executor's governance primitives, one concept per
// sub-package, none of them tied to the call path:
//
//   - [glob]: tool rules by exact name or glob over namespaced tool names, and
//     which rule decides a name when several match;
//   - [quota]: per-tool call quotas over sliding windows (per run, minute,
//     hour, day) with reserve/commit/release for calls still in the pipeline;
//   - [redact]: masking of secret-looking values in a JSON arguments document
//     or free text, with salted fingerprints an auditor can check.
//
// [glob]: github.com/seed-6e06167c/mcp-executor/sidecar/policy/glob
// [quota]: github.com/seed-6e06167c/mcp-executor/sidecar/policy/quota
// [redact]: github.com/seed-6e06167c/mcp-executor/sidecar/policy/redact
package policy
