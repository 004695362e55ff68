//go:build !faultinject

package sidecar

import "github.com/seed-6e06167c/mcp-executor/receipts/jwk"

// faultPoint marks a point in the call path where the robustness tests kill
// the executor. In the normal build it does nothing and is inlined away; see
// faultinject_on.go for the build with the faultinject tag.
func faultPoint(string) {}

// signFault returns s: the normal build has no signing faults.
func signFault(s jwk.Signer) jwk.Signer { return s }
