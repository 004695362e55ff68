package sidecar

import (
	"regexp"
)

// traceparentForm is the W3C trace-context header, version 00.
var traceparentForm = regexp.MustCompile(`^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$`)

// traceID returns the trace id of a well-formed traceparent, "" otherwise.
func traceID(traceparent string) string {
	m := traceparentForm.FindStringSubmatch(traceparent)
	if m == nil || m[1] == "00000000000000000000000000000000" || m[2] == "0000000000000000" {
		return ""
	}
	return m[1]
}
