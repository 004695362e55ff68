package canon

import (
	"errors"

	"github.com/gowebpki/jcs"

	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
)

// MaxJCSDepth is the deepest nesting JCS accepts.
const MaxJCSDepth = 64

// JCS writes raw, any JSON text, in full RFC 8785 form: members sorted by
// UTF-16 code units, numbers as JavaScript writes them (-0 becomes 0, whole
// numbers beyond 2^53 become the nearest double), strings escaped as
// JSON.stringify does. Refused with code "bad-field": text that is not
// JSON, invalid UTF-8, a lone surrogate, a repeated member name, NaN or
// Infinity, a number out of double range, and nesting deeper than 64.
func JCS(raw []byte) ([]byte, error) {
	if err := checkJCSInput(raw); err != nil {
		return nil, err
	}
	out, err := jcs.Transform(raw)
	if err != nil {
		return nil, problem.New(CodeBadField, "the JSON cannot be put in RFC 8785 form: %s", jcsReason(err))
	}
	return out, nil
}

// JCSFingerprint is Fingerprint(JCS(raw)). It hashes the RFC 8785 form as
// it reads raw, without building it (jcsHash); text that way does not take
// goes the library's way, whose verdict stands.
func JCSFingerprint(raw []byte) (string, error) {
	if err := checkJCSInput(raw); err != nil {
		return "", err
	}
	if sum, err := jcsHash(raw); err == nil {
		return B64(sum), nil
	}
	out, err := JCS(raw)
	if err != nil {
		return "", err
	}
	return Fingerprint(out), nil
}

// checkJCSInput refuses what the library would accept or report badly:
// missing text, and nesting deeper than the reference allows. The library
// allows 10,000 levels; the reference refuses any value (or member name)
// inside more than MaxJCSDepth containers, so an empty container may sit
// at level 65 but nothing may sit inside it.
func checkJCSInput(raw []byte) error {
	if len(raw) == 0 {
		return problem.New(CodeBadField, "the JSON cannot be put in RFC 8785 form: empty text")
	}
	depth, inString := 0, false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if inString {
			switch c {
			case '\\':
				if i+1 < len(raw) && raw[i+1] == 'u' {
					_, end, err := UnicodeEscape(raw, i)
					switch {
					case errors.Is(err, ErrLoneSurrogate):
						return problem.New(CodeBadField, "the JSON holds text that is not well-formed unicode (a lone surrogate)")
					case err != nil: // a malformed escape is left to the library
						i++
					default:
						i = end - 1
					}
					continue
				}
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			depth++
			if depth > MaxJCSDepth && !closesAt(raw, i+1) {
				return problem.New(CodeBadField, "the JSON nests more than %d levels deep", MaxJCSDepth)
			}
		case ']', '}':
			depth--
		}
	}
	return nil
}

// closesAt reports whether the next byte after whitespace at i closes a
// container.
func closesAt(raw []byte, i int) bool {
	for ; i < len(raw); i++ {
		switch raw[i] {
		case ' ', '\t', '\n', '\r':
			continue
		case ']', '}':
			return true
		}
		return false
	}
	return false
}

// jcsReason turns a library error into words that never repeat the input
// (the library's messages may quote up to 32 bytes of it).
func jcsReason(err error) string {
	msg := err.Error()
	for _, r := range []struct{ prefix, reason string }{
		{"Duplicate key", "a repeated member name"},
		{"Invalid high surrogate", "a lone surrogate"},
		{"Invalid low surrogate", "a lone surrogate"},
		{"Missing surrogate", "a lone surrogate"},
		{"Invalid UTF-8", "invalid UTF-8"},
		{"Unexpected non-ASCII", "a character outside a string"},
		{"Number out of range", "a number out of range"},
		{"Invalid JSON number", "NaN or Infinity"},
		{"Invalid literal or number", "an invalid literal or number"},
		{"Unexpected EOF", "the text ends too early"},
		{"Improperly terminated", "text after the value"},
	} {
		if len(msg) >= len(r.prefix) && msg[:len(r.prefix)] == r.prefix {
			return r.reason
		}
	}
	return "the text is not JSON"
}
