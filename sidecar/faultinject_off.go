//go:build !faultinject

package sidecar

// faultPoint marks a point in the call path where the robustness tests kill
// the executor. In the normal build it does nothing and is inlined away; see
// faultinject_on.go for the build with the faultinject tag.
func faultPoint(string) {}
