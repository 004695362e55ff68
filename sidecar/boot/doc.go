// Package boot is the executor's start-up loader: it reads what the
// settings name (the Vault and Kubernetes clients, the key sets, the copy
// key, the slip, the rules on content) and adds the slip to the book, each
// step a function of its own, so that the engine's Open (package sidecar)
// and the reports that look at a folder without running it (package
// sidecar/report) read exactly the same things in the same way.
package boot
