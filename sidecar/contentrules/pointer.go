package contentrules

import (
	"errors"

	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// pointer is an RFC 6901 JSON Pointer, kept as written and as its
// unescaped reference tokens.
type pointer struct {
	text   string
	tokens []string
}

var errBadPointer = errors.New(`must be a JSON Pointer (RFC 6901): "" or text starting with "/", with "~" only as "~0" or "~1"`)

func parsePointer(s string) (pointer, error) {
	tokens, err := wire.PointerTokens(s)
	if err != nil {
		return pointer{}, errBadPointer
	}
	return pointer{text: s, tokens: tokens}, nil
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
			i, ok := wire.ArrayIndex(tok)
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
