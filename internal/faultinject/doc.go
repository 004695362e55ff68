// Package faultinject is where the robustness tests (sidecar/robustness)
// break the executor: in a binary built with the faultinject tag it kills
// itself at a named point of a call's path ([Point], FaultEnv), its
// signers fail or hang (SignFaultEnv), and its book is full from a given
// number of entries (FullAtEnv). In the normal build every function here
// does nothing, and is inlined away.
package faultinject
