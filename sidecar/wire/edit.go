package wire

import (
	"unicode/utf8"
)

// SpliceID returns a new line with the bytes of span replaced by newID and
// every other byte kept. newID must be a JSON value (a quoted string or a
// whole number); span is the IDSpan Inspect gave for line.
func SpliceID(line []byte, span Span, newID []byte) []byte {
	out := make([]byte, 0, len(line)-(span.End-span.Start)+len(newID))
	out = append(out, line[:span.Start]...)
	out = append(out, newID...)
	return append(out, line[span.End:]...)
}

// SpliceValue returns a new line with the value at span replaced by value
// (one JSON value) and every other byte kept, with the new line's reading:
// m, the reading of line, with its spans moved (the line is not read
// again). span is one of m's spans or a value's inside params (a
// tools/call's NameSpan: the router gives a server its own name of the
// tool).
func SpliceValue(line []byte, m *Message, span Span, value []byte) ([]byte, *Message) {
	edits := []edit{{at: span.Start, del: span.End - span.Start, ins: value}}
	out := applyEdits(line, edits)
	nm := m.moved(edits)
	nm.slice(out)
	return out, nm
}

// SetMeta returns a new line in which params._meta[key] is the string value,
// keeping every other byte as written: SetMetas with one member. line must
// be a line Inspect accepted and params its ParamsSpan (the zero Span when
// the line has no params). It creates params and _meta when absent and
// replaces the value when key is already there. params or _meta that are
// not objects are an error.
func SetMeta(line []byte, params Span, key, value string) ([]byte, error) {
	return SetMetas(line, params, []Member{{Key: key, Value: value}})
}

// appendString appends s as a JSON string: quotes, backslashes and control
// characters escaped, everything else (including <, > and &) as it is.
// Invalid UTF-8 becomes U+FFFD.
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, "\ufffd"...)
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}
