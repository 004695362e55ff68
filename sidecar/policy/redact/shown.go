package redact

import (
	"bytes"
	"encoding/json"
)

// Name is the shown form of a name or an id: a tool's name, a member name,
// a JSON-RPC id's text. It is the name itself when no detector finds a
// secret in it, and otherwise [REDACTED:<kind>:<tag>], the kind of the
// first detector that found one and the tag of the whole name (Verify
// with the name as original). A name that is a token stays as it is.
//
// The tag is salted like any other token, so the shown form is the same
// for a name wherever the executor shows it under one salt (the copy's,
// kept across restarts): log lines, report rows and spans of one name
// group together, while a reader without the salt cannot test guesses.
func (r *Redactor) Name(s string) string { return r.name(s, &scan{}) }

func (r *Redactor) name(s string, call *scan) string {
	if isToken(s) {
		return s
	}
	f := r.find(s, call, true)
	if len(f) == 0 {
		return s
	}
	return r.token(f[0].Kind, s)
}

// ID is the shown form of a JSON-RPC id given as JSON: the text of a
// string id, or a number as written, by [Redactor.Name]. Bytes that are
// neither are shown by Name of their text.
func (r *Redactor) ID(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return r.Name(s)
	}
	return r.Name(string(raw))
}
