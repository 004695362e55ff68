package record

import "github.com/seed-6e06167c/mcp-executor/receipts/jwk"

// OwnKeys is a jwk.Signer that signs in this process with the very keys it
// reports — a wrapper of a jwk.LocalSigner that adds deadlines or
// telemetry, say — when SignsWithOwnKeys is true. [Sign] trusts what such
// a signer signs, as it trusts a jwk.LocalSigner: sign once, trust once.
// A signer elsewhere (Vault Transit) is checked as each signature arrives.
type OwnKeys interface {
	jwk.Signer
	SignsWithOwnKeys() bool
}

// signsWithOwnKeys reports whether s signs with keys held in this process.
func signsWithOwnKeys(s jwk.Signer) bool {
	if _, ok := s.(*jwk.LocalSigner); ok {
		return true
	}
	o, ok := s.(OwnKeys)
	return ok && o.SignsWithOwnKeys()
}
