// Package vault is the executor's Vault client: it logs in (Kubernetes
// service-account JWT, a token, or AppRole), keeps its token alive (renewal
// before expiry, a fresh login when renewal is no longer possible, and a
// fresh login when Vault refuses a call because the token was revoked or has
// expired), reads and creates fields of KV version 2 secrets, and signs with
// Ed25519 keys of the Transit engine, whose private keys never leave Vault.
//
// Open-source Vault's Transit engine signs with ed25519 but has no ML-DSA
// key type (enterprise only, checked on v1.21.0); package keys therefore
// takes the ML-DSA-87 half of a Transit-held key set from a secret.
//
// Errors name the Vault address, the path, the operation and the auth
// method, never a secret value or a token.
package vault
