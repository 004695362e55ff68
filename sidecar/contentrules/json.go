package contentrules

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// JSON values as this package holds them: *object, []any, string, float64,
// bool and nil (null). Whole numbers up to 2^53−1 are exact in a float64,
// and nothing larger is read.
type object struct {
	names   []string // in the order written
	members map[string]any
}

// maxDepth is how deep arguments and content may nest (as the line reader).
const maxDepth = 10000

// readFault is why a JSON text could not be read exactly.
type readFault int

const (
	faultNotJSON readFault = iota
	faultDuplicate
	faultFoldedDuplicate
	faultBigNumber
	faultBadUnicode
	faultTooDeep
)

// words for a fault in arguments or content; they never hold the text.
func (f readFault) String() string {
	switch f {
	case faultDuplicate:
		return "a member is named twice in one object"
	case faultFoldedDuplicate:
		return "two members of one object have names that differ only in capitals"
	case faultBigNumber:
		return "a number is beyond 9,007,199,254,740,991"
	case faultBadUnicode:
		return "a text is not well-formed Unicode"
	case faultTooDeep:
		return fmt.Sprintf("it nests more than %d levels deep", maxDepth)
	default:
		return "it is not JSON"
	}
}

// readError is a fault with where it is: the path of the value (for the
// rules file's messages only) and the byte offset.
type readError struct {
	fault  readFault
	path   []pathStep
	offset int
	detail string // for the rules file: e.g. the name given twice
}

// pathStep is one step from the top of a JSON value: a member name or an
// index.
type pathStep struct {
	name  string
	index int // -1 for a member
}

// readJSON reads text strictly: RFC 8259 JSON, valid UTF-8, no member named
// twice in one object (folded: nor twice under Unicode simple case
// folding), no number beyond 2^53−1 in size, no lone surrogate, at most
// depth levels of nesting.
func readJSON(text []byte, folded bool, depth int) (any, *readError) {
	r := reader{text: text, folded: folded, maxDepth: depth}
	r.space()
	v, err := r.value(0)
	if err != nil {
		return nil, err
	}
	r.space()
	if r.pos != len(r.text) {
		return nil, r.fail(faultNotJSON, "text after the value")
	}
	return v, nil
}

type reader struct {
	text     []byte
	pos      int
	folded   bool
	maxDepth int
	path     []pathStep
}

func (r *reader) fail(f readFault, detail string) *readError {
	return &readError{fault: f, path: append([]pathStep(nil), r.path...), offset: r.pos, detail: detail}
}

func (r *reader) space() {
	for r.pos < len(r.text) {
		switch r.text[r.pos] {
		case ' ', '\t', '\n', '\r':
			r.pos++
		default:
			return
		}
	}
}

func (r *reader) value(depth int) (any, *readError) {
	if r.pos >= len(r.text) {
		return nil, r.fail(faultNotJSON, "the text ends early")
	}
	switch c := r.text[r.pos]; {
	case c == '{':
		if depth >= r.maxDepth {
			return nil, r.fail(faultTooDeep, "")
		}
		return r.object(depth + 1)
	case c == '[':
		if depth >= r.maxDepth {
			return nil, r.fail(faultTooDeep, "")
		}
		return r.array(depth + 1)
	case c == '"':
		return r.string()
	case c == '-' || (c >= '0' && c <= '9'):
		return r.number()
	default:
		for _, lit := range [...]struct {
			text string
			v    any
		}{{"true", true}, {"false", false}, {"null", nil}} {
			if strings.HasPrefix(string(r.text[r.pos:min(len(r.text), r.pos+5)]), lit.text) {
				r.pos += len(lit.text)
				return lit.v, nil
			}
		}
		return nil, r.fail(faultNotJSON, "a value was expected")
	}
}

func (r *reader) object(depth int) (any, *readError) {
	r.pos++ // '{'
	o := &object{members: map[string]any{}}
	var folds map[string]struct{}
	if r.folded {
		folds = map[string]struct{}{}
	}
	if r.closes('}') {
		return o, nil
	}
	for {
		r.space()
		if r.pos >= len(r.text) || r.text[r.pos] != '"' {
			return nil, r.fail(faultNotJSON, "a member name was expected")
		}
		name, err := r.string()
		if err != nil {
			return nil, err
		}
		if _, dup := o.members[name]; dup {
			return nil, r.fail(faultDuplicate, name)
		}
		if folds != nil {
			k := wire.FoldKey(name)
			if _, dup := folds[k]; dup {
				return nil, r.fail(faultFoldedDuplicate, name)
			}
			folds[k] = struct{}{}
		}
		r.space()
		if r.pos >= len(r.text) || r.text[r.pos] != ':' {
			return nil, r.fail(faultNotJSON, "':' was expected")
		}
		r.pos++
		r.space()
		r.path = append(r.path, pathStep{name: name, index: -1})
		v, err := r.value(depth)
		if err != nil {
			return nil, err
		}
		r.path = r.path[:len(r.path)-1]
		o.names = append(o.names, name)
		o.members[name] = v
		more, err := r.more('}')
		if err != nil {
			return nil, err
		}
		if !more {
			return o, nil
		}
	}
}

func (r *reader) array(depth int) (any, *readError) {
	r.pos++ // '['
	a := []any{}
	if r.closes(']') {
		return a, nil
	}
	for {
		r.space()
		r.path = append(r.path, pathStep{index: len(a)})
		v, err := r.value(depth)
		if err != nil {
			return nil, err
		}
		r.path = r.path[:len(r.path)-1]
		a = append(a, v)
		more, err := r.more(']')
		if err != nil {
			return nil, err
		}
		if !more {
			return a, nil
		}
	}
}

// closes reads end (the '}' or ']' that closes an object or array) if it
// comes next after white space, and reports whether it did.
func (r *reader) closes(end byte) bool {
	r.space()
	if r.pos < len(r.text) && r.text[r.pos] == end {
		r.pos++
		return true
	}
	return false
}

// more reads what follows a member or an element after white space: a
// comma (more follows) or end (the object or array is closed).
func (r *reader) more(end byte) (bool, *readError) {
	r.space()
	if r.pos >= len(r.text) {
		return false, r.fail(faultNotJSON, "the text ends early")
	}
	switch r.text[r.pos] {
	case ',':
		r.pos++
		return true, nil
	case end:
		r.pos++
		return false, nil
	}
	return false, r.fail(faultNotJSON, fmt.Sprintf("',' or '%c' was expected", end))
}

// number reads an RFC 8259 number; any number whose size is beyond 2^53−1
// (1e300, 9007199254740992, -9007199254740992) is refused, as a reader in
// another language could hold it differently.
func (r *reader) number() (any, *readError) {
	start := r.pos
	i := r.pos
	if i < len(r.text) && r.text[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(r.text) && r.text[i] >= '0' && r.text[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(r.text) && r.text[i] == '0' {
		i++
	} else if digits() == 0 {
		return nil, r.fail(faultNotJSON, "a number was expected")
	}
	if i < len(r.text) && r.text[i] == '.' {
		i++
		if digits() == 0 {
			return nil, r.fail(faultNotJSON, "a digit was expected")
		}
	}
	if i < len(r.text) && (r.text[i] == 'e' || r.text[i] == 'E') {
		i++
		if i < len(r.text) && (r.text[i] == '+' || r.text[i] == '-') {
			i++
		}
		if digits() == 0 {
			return nil, r.fail(faultNotJSON, "a digit was expected")
		}
	}
	r.pos = i
	f, err := strconv.ParseFloat(string(r.text[start:i]), 64)
	if err != nil || f > canon.MaxSafeInt || f < -canon.MaxSafeInt {
		r.pos = start
		return nil, r.fail(faultBigNumber, "")
	}
	return f, nil
}

// string reads a JSON string at its opening quote.
func (r *reader) string() (string, *readError) {
	r.pos++
	start := r.pos
	for r.pos < len(r.text) {
		c := r.text[r.pos]
		if c == '"' {
			s := r.text[start:r.pos]
			if !utf8.Valid(s) {
				return "", r.fail(faultBadUnicode, "")
			}
			r.pos++
			return string(s), nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", r.fail(faultNotJSON, "a control character in a text")
		}
		r.pos++
	}
	var b strings.Builder
	b.Write(r.text[start:r.pos])
	for r.pos < len(r.text) {
		c := r.text[r.pos]
		switch {
		case c == '"':
			r.pos++
			s := b.String()
			if !utf8.ValidString(s) {
				return "", r.fail(faultBadUnicode, "")
			}
			return s, nil
		case c < 0x20:
			return "", r.fail(faultNotJSON, "a control character in a text")
		case c != '\\':
			b.WriteByte(c)
			r.pos++
			continue
		}
		if r.pos+1 >= len(r.text) {
			return "", r.fail(faultNotJSON, "the text ends early")
		}
		switch e := r.text[r.pos+1]; e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			u, end, err := canon.UnicodeEscape(r.text, r.pos)
			r.pos = end
			switch {
			case errors.Is(err, canon.ErrLoneSurrogate):
				return "", r.fail(faultBadUnicode, "")
			case err != nil:
				return "", r.fail(faultNotJSON, "a bad \\u escape")
			}
			b.WriteRune(u)
			continue
		default:
			return "", r.fail(faultNotJSON, "an unknown escape")
		}
		r.pos += 2
	}
	return "", r.fail(faultNotJSON, "a text is not closed")
}

// equalJSON reports whether a and b are the same JSON value: numbers by
// value, objects whatever the order of their members.
func equalJSON(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	case *object:
		y, ok := b.(*object)
		if !ok || len(x.members) != len(y.members) {
			return false
		}
		for k, v := range x.members {
			w, ok := y.members[k]
			if !ok || !equalJSON(v, w) {
				return false
			}
		}
		return true
	}
	return false
}

// writeJSON writes a value from the rules file for a message, compactly.
func writeJSON(v any) string {
	var b strings.Builder
	var write func(any)
	write = func(v any) {
		switch x := v.(type) {
		case nil:
			b.WriteString("null")
		case bool:
			b.WriteString(strconv.FormatBool(x))
		case float64:
			b.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
		case string:
			b.WriteString(strconv.Quote(x))
		case []any:
			b.WriteByte('[')
			for i, e := range x {
				if i > 0 {
					b.WriteString(", ")
				}
				write(e)
			}
			b.WriteByte(']')
		case *object:
			b.WriteByte('{')
			for i, k := range x.names {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString(strconv.Quote(k))
				b.WriteString(": ")
				write(x.members[k])
			}
			b.WriteByte('}')
		}
	}
	write(v)
	return b.String()
}
