// Package archtest holds no code: its test pins the one-way dependencies between the project's rooms
// (docs/architecture.md) from what `go list -deps -test -json ./...` reports, so an import that runs the
// wrong way fails the test run with the chain of imports that brought it in.
package archtest
