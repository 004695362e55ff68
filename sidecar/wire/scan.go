package wire

import (
	"bytes"
	"fmt"
	"slices"
	"unicode/utf8"
)

// maxDepth is the deepest nesting of objects and arrays a line may have.
const maxDepth = 10000

// syntaxError is a place where the bytes stop being JSON.
type syntaxError struct {
	off int
	msg string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%s at byte %d", e.msg, e.off) }

func errAt(off int, msg string) error { return &syntaxError{off: off, msg: msg} }

// errTooDeep is returned (wrapped in a syntaxError) when nesting passes maxDepth.
const tooDeep = "nesting deeper than 10000"

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipWS(b []byte, i int) int {
	for i < len(b) && isWS(b[i]) {
		i++
	}
	return i
}

// checker scans JSON values. With check set it also looks for the faults a
// line may not carry (two member names of one object equal under Unicode
// simple case folding, a number beyond 2^53−1) and keeps the first one with
// the offset where it is; the scan goes on so that a later syntax error
// still wins.
type checker struct {
	check   bool
	fault   Fault
	reason  string
	faultAt int        // offset of the faulty member's name or of the number
	names   []seenName // member names of the objects being scanned, a stack
	// top, when set, is told of every member of the outermost object.
	top func(name []byte, nameStart, valStart, valEnd int)
	// param, when set, is told of every member of the outermost object's
	// "params" when that is an object, with the member name's fold key
	// (nil when the checker did not make it).
	param    func(name, key []byte, nameStart, valStart, valEnd int)
	paramsAt int // where the outermost object's "params" value begins; 0 before it is met
}

// seenName is a member name of an object being scanned.
type seenName struct {
	key  []byte // FoldKey of the decoded name
	name []byte // decoded name
	at   int    // offset of its opening quote
}

func (c *checker) setFault(f Fault, at int, reason string) {
	if c.fault == 0 {
		c.fault, c.faultAt, c.reason = f, at, reason
	}
}

// duplicate records the fault of two member names of one object that are
// equal under case folding; later is the offset of the later one.
func (c *checker) duplicate(a, b seenName) {
	later := a
	if b.at > later.at {
		later = b
	}
	if bytes.Equal(a.name, b.name) {
		c.setFault(FaultDuplicate, later.at, "a member name given twice")
		return
	}
	c.setFault(FaultDuplicate, later.at, "two member names equal under Unicode case folding")
}

// value scans one value starting exactly at b[i] and returns its end.
func (c *checker) value(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return i, errAt(i, "unexpected end of input")
	}
	switch b[i] {
	case '{':
		return c.object(b, i, depth+1)
	case '[':
		return c.array(b, i, depth+1)
	case '"':
		end, _, err := scanString(b, i)
		return end, err
	case 't':
		return literal(b, i, "true")
	case 'f':
		return literal(b, i, "false")
	case 'n':
		return literal(b, i, "null")
	default:
		if b[i] == '-' || (b[i] >= '0' && b[i] <= '9') {
			end, err := scanNumber(b, i)
			if err != nil {
				return end, err
			}
			if c != nil && c.check && c.fault == 0 && beyondSafe(b[i:end]) {
				c.setFault(FaultBigNumber, i, "a number beyond 2^53-1")
			}
			return end, nil
		}
		return i, errAt(i, "unexpected character")
	}
}

func literal(b []byte, i int, word string) (int, error) {
	if len(b)-i < len(word) || string(b[i:i+len(word)]) != word {
		return i, errAt(i, "unexpected character")
	}
	return i + len(word), nil
}

const linearNames = 32

func (c *checker) object(b []byte, i, depth int) (int, error) {
	if depth > maxDepth {
		return i, errAt(i, tooDeep)
	}
	start := i
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	base := 0
	tracking := c != nil && c.check
	if tracking {
		base = len(c.names)
	}
	isParams := depth == 2 && c != nil && c.param != nil && start == c.paramsAt
	for {
		if i >= len(b) || b[i] != '"' {
			return i, errAt(i, "expected a member name")
		}
		nameStart := i
		end, esc, err := scanString(b, i)
		if err != nil {
			return end, err
		}
		var name []byte
		if tracking || (depth == 1 && c != nil && c.top != nil) {
			name = b[nameStart+1 : end-1]
			if esc {
				name = decodeString(name)
			}
		}
		var key []byte
		if tracking && c.fault == 0 {
			key = c.track(base, name, nameStart)
		}
		i = skipWS(b, end)
		if i >= len(b) || b[i] != ':' {
			return i, errAt(i, "expected a colon")
		}
		i = skipWS(b, i+1)
		valStart := i
		if depth == 1 && c != nil && c.param != nil && string(name) == "params" {
			c.paramsAt = valStart
		}
		i, err = c.value(b, i, depth)
		if err != nil {
			return i, err
		}
		if depth == 1 && c != nil && c.top != nil {
			c.top(name, nameStart, valStart, i)
		}
		if isParams {
			c.param(name, key, nameStart, valStart, i)
		}
		i = skipWS(b, i)
		if i >= len(b) {
			return i, errAt(start, "object not closed")
		}
		if b[i] == '}' {
			if tracking {
				c.closeNames(base)
			}
			return i + 1, nil
		}
		if b[i] != ',' {
			return i, errAt(i, "expected a comma or the end of the object")
		}
		i = skipWS(b, i+1)
	}
}

// track notes a member name of the object whose names begin at c.names[base]
// and returns its fold key. Small objects are compared as they are read;
// larger ones are sorted once at their end (closeNames).
func (c *checker) track(base int, name []byte, nameStart int) []byte {
	seen := seenName{key: foldKey(name), name: name, at: nameStart}
	if len(c.names)-base < linearNames {
		for _, n := range c.names[base:] {
			if bytes.Equal(n.key, seen.key) {
				c.duplicate(n, seen)
				break
			}
		}
	}
	c.names = append(c.names, seen)
	return seen.key
}

// closeNames ends the object whose names begin at c.names[base]: a large
// one's names are compared now, and they leave the stack.
func (c *checker) closeNames(base int) {
	if names := c.names[base:]; len(names) > linearNames && c.fault == 0 {
		slices.SortStableFunc(names, func(x, y seenName) int { return bytes.Compare(x.key, y.key) })
		for k := 1; k < len(names); k++ {
			if bytes.Equal(names[k-1].key, names[k].key) {
				c.duplicate(names[k-1], names[k])
				break
			}
		}
	}
	c.names = c.names[:base]
}

func (c *checker) array(b []byte, i, depth int) (int, error) {
	if depth > maxDepth {
		return i, errAt(i, tooDeep)
	}
	start := i
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for {
		var err error
		i, err = c.value(b, i, depth)
		if err != nil {
			return i, err
		}
		i = skipWS(b, i)
		if i >= len(b) {
			return i, errAt(start, "array not closed")
		}
		if b[i] == ']' {
			return i + 1, nil
		}
		if b[i] != ',' {
			return i, errAt(i, "expected a comma or the end of the array")
		}
		i = skipWS(b, i+1)
	}
}

// scanString scans a string starting at b[i] == '"' and returns the index
// after its closing quote and whether it holds an escape.
func scanString(b []byte, i int) (end int, esc bool, err error) {
	start := i
	i++
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			return i + 1, esc, nil
		case c == '\\':
			esc = true
			if i+1 >= len(b) {
				return i, esc, errAt(i, "string not closed")
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return i, esc, errAt(i, "bad escape")
				}
				for _, h := range b[i+2 : i+6] {
					if hexVal(h) < 0 {
						return i, esc, errAt(i, "bad escape")
					}
				}
				i += 6
			default:
				return i, esc, errAt(i, "bad escape")
			}
		case c < 0x20:
			return i, esc, errAt(i, "control character in a string")
		default:
			i++
		}
	}
	return i, esc, errAt(start, "string not closed")
}

func hexVal(h byte) int {
	switch {
	case h >= '0' && h <= '9':
		return int(h - '0')
	case h >= 'a' && h <= 'f':
		return int(h-'a') + 10
	case h >= 'A' && h <= 'F':
		return int(h-'A') + 10
	}
	return -1
}

// decodeString decodes the inside of a string that scanString accepted. A
// lone surrogate escape is kept as its own three-byte (WTF-8) sequence so
// that two different lone surrogates never decode alike.
func decodeString(raw []byte) []byte {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		switch raw[i+1] {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := hex4(raw[i+2:])
			i += 6
			if r >= 0xD800 && r < 0xDC00 && i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
				if lo := hex4(raw[i+2:]); lo >= 0xDC00 && lo < 0xE000 {
					out = utf8.AppendRune(out, 0x10000+(r-0xD800)<<10+(lo-0xDC00))
					i += 6
					continue
				}
			}
			if r >= 0xD800 && r < 0xE000 {
				out = append(out, 0xE0|byte(r>>12), 0x80|byte(r>>6)&0x3F, 0x80|byte(r)&0x3F)
			} else {
				out = utf8.AppendRune(out, r)
			}
			continue
		default: // '"', '\\', '/'
			out = append(out, raw[i+1])
		}
		i += 2
	}
	return out
}

func hex4(b []byte) rune {
	return rune(hexVal(b[0])<<12 | hexVal(b[1])<<8 | hexVal(b[2])<<4 | hexVal(b[3]))
}

// skipValue scans one value at b[i] (after whitespace) with no checks.
func skipValue(b []byte, i int) (int, error) {
	var c checker
	return c.value(b, skipWS(b, i), 0)
}

// wholeValue checks that raw is exactly one JSON value with optional
// whitespace around it, and returns its span.
func wholeValue(raw []byte) (start, end int, err error) {
	start = skipWS(raw, 0)
	end, err = skipValue(raw, start)
	if err != nil {
		return 0, 0, err
	}
	if skipWS(raw, end) != len(raw) {
		return 0, 0, errAt(end, "more after the value")
	}
	return start, end, nil
}

// eachMember calls fn for each member of the object raw[i:] (raw[i] == '{')
// with the decoded name and the value's span; it stops early when fn returns
// false. It returns the object's end.
func eachMember(raw []byte, i int, fn func(name []byte, nameStart, valStart, valEnd int) bool) (int, error) {
	if i >= len(raw) || raw[i] != '{' {
		return i, errAt(i, "not an object")
	}
	i = skipWS(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(raw) || raw[i] != '"' {
			return i, errAt(i, "expected a member name")
		}
		nameStart := i
		end, esc, err := scanString(raw, i)
		if err != nil {
			return end, err
		}
		name := raw[nameStart+1 : end-1]
		if esc {
			name = decodeString(name)
		}
		i = skipWS(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return i, errAt(i, "expected a colon")
		}
		vs := skipWS(raw, i+1)
		ve, err := skipValue(raw, vs)
		if err != nil {
			return ve, err
		}
		if fn != nil && !fn(name, nameStart, vs, ve) {
			fn = nil
		}
		i = skipWS(raw, ve)
		if i >= len(raw) {
			return i, errAt(i, "object not closed")
		}
		if raw[i] == '}' {
			return i + 1, nil
		}
		if raw[i] != ',' {
			return i, errAt(i, "expected a comma or the end of the object")
		}
		i = skipWS(raw, i+1)
	}
}

// eachElement calls fn for each element of the array raw[i:] (raw[i] == '[')
// with the index just after the '[' or ',' before it (segStart) and the
// element's span. It returns the array's end.
func eachElement(raw []byte, i int, fn func(segStart, valStart, valEnd int)) (int, error) {
	if i >= len(raw) || raw[i] != '[' {
		return i, errAt(i, "not an array")
	}
	seg := i + 1
	i = skipWS(raw, i+1)
	if i < len(raw) && raw[i] == ']' {
		return i + 1, nil
	}
	for {
		ve, err := skipValue(raw, i)
		if err != nil {
			return ve, err
		}
		if fn != nil {
			fn(seg, i, ve)
		}
		i = skipWS(raw, ve)
		if i >= len(raw) {
			return i, errAt(i, "array not closed")
		}
		if raw[i] == ']' {
			return i + 1, nil
		}
		if raw[i] != ',' {
			return i, errAt(i, "expected a comma or the end of the array")
		}
		seg = i + 1
		i = skipWS(raw, i+1)
	}
}
