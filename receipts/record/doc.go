// Package record reads and writes the Provared envelope (JWS in the general
// JSON serialisation, narrowed by the format description §3.1–3.5) for every
// kind of record, signs and checks the hybrid-signed kinds (Ed25519 then
// ML-DSA-87), and confirms the content of stubs, countersignatures,
// refusals and acknowledgements with the reference's rules and codes.
//
// Faults are *problem.Error values with the reference's codes: the envelope
// checks run in the reference's order (bad-envelope, too-large,
// bad-base64url, unknown-type, payload-type-mismatch, bad-signatures-layout,
// payload-not-canonical, bad-field, payload-type-mismatch), and the content
// checks give "bad-field" (or "bad-key" for a faulty key set).
package record
