// Package passkey checks the passkey (WebAuthn assertion) signatures that a
// Provared slip, approval or cancellation carries, and holds the rules those
// checks rely on: the exact form of a slip's issuer origin and rpId, and the
// strict DER form of an ES256 signature (format description, sections 4.1
// and 4.4).
//
// It also holds DevPasskey, a software ES256 authenticator for tests and the
// demo only. A record signed with it proves nothing about any person.
package passkey
