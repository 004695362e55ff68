//go:build !faultinject

package sidecar

// fullAtFault is n: only a faultinject build may move the point at which
// the book is full (see bookfull_fault_on.go).
func fullAtFault(n int) int { return n }
