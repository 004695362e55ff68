package contentrules

import (
	"errors"
	"strings"
)

// pointer is an RFC 6901 JSON Pointer, kept as written and as its
// unescaped reference tokens.
type pointer struct {
	text   string
	tokens []string
}

var errBadPointer = errors.New(`must be a JSON Pointer (RFC 6901): "" or text starting with "/", with "~" only as "~0" or "~1"`)

func parsePointer(s string) (pointer, error) {
	if s == "" {
		return pointer{}, nil
	}
	if s[0] != '/' {
		return pointer{}, errBadPointer
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '~' && (i+1 >= len(s) || (s[i+1] != '0' && s[i+1] != '1')) {
			return pointer{}, errBadPointer
		}
	}
	parts := strings.Split(s[1:], "/")
	for i, p := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
	}
	return pointer{text: s, tokens: parts}, nil
}

// find returns the value at the pointer, and whether there is one: a
// missing member, an index past the end or written otherwise than in plain
// digits ("-", "01"), or a step into a text, number, true, false or null
// finds nothing.
func (p pointer) find(v any) (any, bool) {
	for _, tok := range p.tokens {
		switch x := v.(type) {
		case *object:
			next, ok := x.members[tok]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			i, ok := arrayIndex(tok)
			if !ok || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

func arrayIndex(tok string) (int, bool) {
	if tok == "" || len(tok) > 9 || (len(tok) > 1 && tok[0] == '0') {
		return 0, false
	}
	n := 0
	for i := 0; i < len(tok); i++ {
		if tok[i] < '0' || tok[i] > '9' {
			return 0, false
		}
		n = n*10 + int(tok[i]-'0')
	}
	return n, true
}
