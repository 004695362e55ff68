// Package keys says where the executor's secrets come from and turns them
// into what the rest of the program uses: the two key sets (each an Ed25519
// and an ML-DSA-87 signer, as a jwk.Signer), the copy key (32 bytes for the
// copy's HMAC tags) and the tool server's credentials (environment values).
//
// Each secret is named in the settings by a source (see ParseSource): a file
// path, env:NAME, vault:<kv-v2 mount>/<path>#<field>, vault-transit:<key>
// (Ed25519 signing done inside Vault; the private key never leaves it) or
// secret:<namespace>/<name>#<key> (a Kubernetes Secret read with get only).
// The Vault and Kubernetes clients live in the sub-packages keys/vault and
// keys/kube; the caller builds them from the settings and hands them in
// through Options.
//
// No secret value ever appears in an error or a log line written here:
// errors name the source (its spec as written in the settings) and what was
// wrong with it, never what it held.
package keys
