package streamhttp

import "net/http"

// For the external tests: the parsers of untrusted bytes, and the event writer.
var (
	AppendEvent      = appendEvent
	DecodeName       = decodeName
	JSONText         = jsonText
	CheckHeaderNames = checkHeaderNames
	IDKey            = idKey
	ParamAgrees      = paramAgrees
)

// ParseEventID returns the event id's String, and whether it was taken.
func ParseEventID(s string) (string, bool) {
	id, err := parseEventID(s)
	return id.String(), err == nil
}

// ReadOne is readOne without the error's type.
func ReadOne(h http.Header, name string, inner bool) (string, bool, error) {
	v, present, err := readOne(h, name, inner)
	if err != nil {
		return "", present, err
	}
	return v, present, nil
}

// Matches reports whether tok is one of ts.
func (ts *Tokens) Matches(tok string) bool {
	_, ok := ts.match(tok)
	return ok
}
