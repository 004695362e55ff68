//go:build !faultinject

package faultinject

import "github.com/seed-6e06167c/mcp-executor/receipts/jwk"

// Point marks a point in the call path where the robustness tests kill
// the executor. In the normal build it does nothing and is inlined away; see
// on.go for the build with the faultinject tag.
func Point(string) {}

// Signer returns s: the normal build has no signing faults.
func Signer(s jwk.Signer) jwk.Signer { return s }
