// Package report holds the commands that look at an executor's folder
// without running it: `check` ([CheckSetup]: read everything, write
// nothing), `keys` ([MakeKeys]: make what is missing, say what goes into
// the permission) and `compare` ([CompareCopy]: hold the copy against the
// book while the executor may be running). They read through the same
// start-up loader as the executor's Open (package sidecar/boot), so that
// they read exactly what a start reads.
package report

import "log/slog"

// orDiscard is log, or a logger that writes nothing when log is nil.
func orDiscard(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return log
}
