package wire

import (
	"errors"
	"fmt"
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

// SetMeta returns a new line in which params._meta[key] is the string value,
// keeping every other byte as written. line must be a line Inspect accepted
// and params its ParamsSpan (the zero Span when the line has no params). It
// creates params and _meta when absent and
// replaces the value when key is already there. params or _meta that are not
// objects are an error.
func SetMeta(line []byte, params Span, key, value string) ([]byte, error) {
	member := append(appendString(nil, key), ':')
	member = appendString(member, value)
	if !params.Present() {
		end := len(line) - 1
		for end > 0 && isWS(line[end]) {
			end--
		}
		if end <= 0 || line[end] != '}' {
			return nil, errors.New("set meta: end is not the closing brace")
		}
		ins := append([]byte(`,"params":{"_meta":{`), member...)
		ins = append(ins, "}}"...)
		return insertAt(line, end, ins), nil
	}
	if line[params.Start] != '{' {
		return nil, errors.New("set meta: params is not an object")
	}
	var meta Span
	_, err := eachMember(line[:params.End], params.Start, func(name []byte, _, vs, ve int) bool {
		if string(name) == "_meta" {
			meta = Span{vs, ve}
			return false
		}
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("set meta: params: %w", err)
	}
	if !meta.Present() {
		ins := append([]byte(`"_meta":{`), member...)
		ins = append(ins, '}')
		return insertFirst(line, params.Start, ins), nil
	}
	if line[meta.Start] != '{' {
		return nil, errors.New("set meta: params._meta is not an object")
	}
	var old Span
	_, err = eachMember(line[:meta.End], meta.Start, func(name []byte, _, vs, ve int) bool {
		if string(name) == key {
			old = Span{vs, ve}
			return false
		}
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("set meta: params._meta: %w", err)
	}
	if old.Present() {
		return SpliceID(line, old, appendString(nil, value)), nil
	}
	return insertFirst(line, meta.Start, member), nil
}

// insertFirst puts a member at the start of the object whose '{' is at open,
// with a comma after it when the object has members.
func insertFirst(line []byte, open int, member []byte) []byte {
	if line[skipWS(line, open+1)] != '}' {
		member = append(member, ',')
	}
	return insertAt(line, open+1, member)
}

func insertAt(line []byte, at int, ins []byte) []byte {
	out := make([]byte, 0, len(line)+len(ins))
	out = append(out, line[:at]...)
	out = append(out, ins...)
	return append(out, line[at:]...)
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

// AppendString appends s to dst as a JSON string (see [SetMeta] for the
// escaping used).
func AppendString(dst []byte, s string) []byte { return appendString(dst, s) }
