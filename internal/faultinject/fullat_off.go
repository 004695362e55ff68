//go:build !faultinject

package faultinject

// FullAt is n: only a faultinject build may move the point at which the
// book is full (see fullat_on.go).
func FullAt(n int) int { return n }
