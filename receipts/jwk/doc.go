// Package jwk reads the public keys of Provared records (JSON Web Keys in
// exactly the shapes the format accepts), computes their thumbprints,
// checks signatures made with them, and holds the two-key sets (Ed25519 then
// ML-DSA-87) that agents and services sign with.
//
// Every fault in a key is a *problem.Error with code "bad-key". Signing is
// behind the Signer interface so that a key set may live in this process
// (LocalSigner) or elsewhere (package keys adds Vault Transit).
package jwk
