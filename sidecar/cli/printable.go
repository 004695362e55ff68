package cli

import (
	"bytes"
	"io"

	"github.com/seed-6e06167c/mcp-executor/sidecar/policy/redact"
)

// shown is text from a tool server, a client or a file as a terminal may
// print it: control, format and separator characters escaped
// ([redact.Printable]), so that no escape sequence, bell or bidirectional
// override reaches the terminal.
func shown(s string) string { return redact.Printable(s) }

// writeShownJSON is writeJSON with every character a terminal could act on
// written as a JSON escape ([redact.PrintableJSON]): the same JSON value.
func writeShownJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	if err := writeJSON(&b, v); err != nil {
		return err
	}
	_, err := w.Write(redact.PrintableJSON(b.Bytes()))
	return err
}
