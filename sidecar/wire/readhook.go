package wire

import "sync/atomic"

// What a reading reads, as [SetReadHook]'s hook is told.
const (
	ReadLine    = "line"    // Inspect: a whole line, every byte checked
	ReadPointer = "pointer" // Pointer: the value it looks in
	ReadMeta    = "meta"    // ReadCall and EditRequest: a request's params._meta
)

// readHook is the function SetReadHook set; nil when none is.
var readHook atomic.Pointer[func(what string, b []byte)]

// SetReadHook makes every reading of bytes this package makes (Inspect,
// Pointer, and the walks of a request's params._meta) tell hook what it
// reads, until restore is called. It is for tests that hold the executor
// to reading a line once: the hook may be called from any goroutine.
func SetReadHook(hook func(what string, b []byte)) (restore func()) {
	old := readHook.Swap(&hook)
	return func() { readHook.Store(old) }
}

// noteRead tells the hook, when one is set, of a reading of b.
func noteRead(what string, b []byte) {
	if f := readHook.Load(); f != nil {
		(*f)(what, b)
	}
}
