package sidecar

import (
	"encoding/json"
	"log/slog"
	"strconv"

	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

func itoa(n int) string { return strconv.Itoa(n) }

// orDiscard is log, or a logger that writes nothing when log is nil.
func orDiscard(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return log
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }

// jsonString writes s as a JSON string.
func jsonString(s string) []byte { return wire.AppendString(nil, s) }

// unquoteID returns a string id's text; a number id is not one of ours.
func unquoteID(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// codeInternalError answers a call whose receipt could not be written.
const codeInternalError = wire.CodeInternalError
