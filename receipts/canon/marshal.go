package canon

import (
	"fmt"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
)

// Marshal writes v as canonical JSON. v may hold map[string]any,
// map[string]string, []any, []string, string and whole numbers 0 … 2^53−1
// as int, int64, uint64, int32 or uint32. Anything else, invalid UTF-8, a
// number out of range or nesting deeper than 8 is refused with code
// "payload-not-canonical".
func Marshal(v any) ([]byte, error) {
	// Written into a scratch buffer used again, then copied out at its
	// length: one allocation, not one for each time the text outgrows its
	// buffer.
	scratch, ok := marshalScratch.Get().(*[]byte)
	if !ok {
		scratch = new([]byte)
	}
	buf, err := appendValue((*scratch)[:0], v, 0)
	var out []byte
	if err == nil {
		out = make([]byte, len(buf))
		copy(out, buf)
	}
	if cap(buf) <= maxScratch {
		*scratch = buf[:0]
		marshalScratch.Put(scratch)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// marshalScratch holds Marshal's scratch buffers; one that grew past
// maxScratch is let go rather than kept.
var marshalScratch sync.Pool // of *[]byte

const maxScratch = 64 << 10

// MustMarshal is Marshal for constants and tests; it panics on a fault.
func MustMarshal(v any) []byte {
	b, err := Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("canon.MustMarshal: %v", err))
	}
	return b
}

func appendValue(out []byte, v any, depth int) ([]byte, error) {
	value := func(out []byte, e any) ([]byte, error) { return appendValue(out, e, depth+1) }
	switch x := v.(type) {
	case string:
		return appendString(out, x)
	case int64:
		return appendInt(out, x)
	case int:
		return appendInt(out, int64(x))
	case int32:
		return appendInt(out, int64(x))
	case uint32:
		return appendInt(out, int64(x))
	case uint64:
		if x > MaxSafeInt {
			return nil, problem.New(CodeNotCanonical, "a number must be a whole number from 0 to 2^53-1")
		}
		return appendInt(out, int64(x))
	case []any:
		return appendList(out, x, depth, value)
	case []string:
		return appendList(out, x, depth, appendString)
	case map[string]any:
		return appendObject(out, x, depth, value)
	case map[string]string:
		return appendObject(out, x, depth, appendString)
	case nil:
		return nil, problem.New(CodeNotCanonical, "only objects, lists, strings and whole numbers are allowed, not null")
	default:
		return nil, problem.New(CodeNotCanonical, "only objects, lists, strings and whole numbers are allowed, not %T", v)
	}
}

// appendList writes a list at depth, each item with item.
func appendList[T any](out []byte, items []T, depth int, item func([]byte, T) ([]byte, error)) ([]byte, error) {
	if depth >= MaxDepth {
		return nil, errTooDeep()
	}
	out = append(out, '[')
	for i, e := range items {
		if i > 0 {
			out = append(out, ',')
		}
		var err error
		if out, err = item(out, e); err != nil {
			return nil, err
		}
	}
	return append(out, ']'), nil
}

// appendObject writes an object at depth, members in the order of their names (UTF-16 code units, as
// sortedKeys gives them), each value with value.
func appendObject[V any](out []byte, m map[string]V, depth int, value func([]byte, V) ([]byte, error)) ([]byte, error) {
	if depth >= MaxDepth {
		return nil, errTooDeep()
	}
	out = append(out, '{')
	for i, k := range sortedKeys(m) {
		if i > 0 {
			out = append(out, ',')
		}
		var err error
		if out, err = appendString(out, k); err != nil {
			return nil, err
		}
		out = append(out, ':')
		if out, err = value(out, m[k]); err != nil {
			return nil, err
		}
	}
	return append(out, '}'), nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, utf16Compare)
	return keys
}

func errTooDeep() error {
	return problem.New(CodeNotCanonical, "the content nests too deeply (more than %d levels)", MaxDepth)
}

func appendInt(out []byte, n int64) ([]byte, error) {
	if n < 0 || n > MaxSafeInt {
		return nil, problem.New(CodeNotCanonical, "a number must be a whole number from 0 to 2^53-1")
	}
	return strconv.AppendInt(out, n, 10), nil
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a canonical JSON string: `\"`, `\\`, the five
// short escapes, other controls as \u00xx in lowercase, all else literal.
func appendString(out []byte, s string) ([]byte, error) {
	if !utf8.ValidString(s) {
		return nil, problem.New(CodeNotCanonical, "a string is not well-formed unicode")
	}
	out = append(out, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		out = append(out, s[start:i]...)
		switch c {
		case '"':
			out = append(out, '\\', '"')
		case '\\':
			out = append(out, '\\', '\\')
		case '\b':
			out = append(out, '\\', 'b')
		case '\f':
			out = append(out, '\\', 'f')
		case '\n':
			out = append(out, '\\', 'n')
		case '\r':
			out = append(out, '\\', 'r')
		case '\t':
			out = append(out, '\\', 't')
		default:
			out = append(out, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	out = append(out, s[start:]...)
	return append(out, '"'), nil
}
