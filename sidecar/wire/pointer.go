package wire

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrBadPointer is returned for a JSON Pointer that is not in RFC 6901 form.
var ErrBadPointer = errors.New("not a JSON pointer")

// CheckPointer reports whether ptr is an RFC 6901 JSON Pointer: empty, or
// "/"-separated tokens in which "~" appears only as "~0" or "~1".
func CheckPointer(ptr string) error {
	if ptr == "" {
		return nil
	}
	if ptr[0] != '/' {
		return ErrBadPointer
	}
	for i := 0; i < len(ptr); i++ {
		if ptr[i] == '~' && (i+1 >= len(ptr) || (ptr[i+1] != '0' && ptr[i+1] != '1')) {
			return ErrBadPointer
		}
	}
	return nil
}

// PointerTokens checks ptr as [CheckPointer] does and returns its reference
// tokens unescaped ("~1" is "/", "~0" is "~"); none for "".
func PointerTokens(ptr string) ([]string, error) {
	if err := CheckPointer(ptr); err != nil || ptr == "" {
		return nil, err
	}
	tokens := strings.Split(ptr[1:], "/")
	for i, tok := range tokens {
		tokens[i] = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
	}
	return tokens, nil
}

// Pointer finds the value at the RFC 6901 pointer ptr in the JSON value raw
// and returns its bytes as written. found is false when nothing is there
// (a missing member, an index out of range or "-", a step into a scalar).
// err is for a malformed pointer or raw that is not JSON. When a member is
// named twice the first one is taken; lines reaching here have passed
// [Inspect], which refuses that.
func Pointer(raw []byte, ptr string) (value []byte, found bool, err error) {
	noteRead(ReadPointer, raw)
	tokens, err := PointerTokens(ptr)
	if err != nil {
		return nil, false, err
	}
	start, end, err := wholeValue(raw)
	if err != nil {
		return nil, false, fmt.Errorf("pointer: %w", err)
	}
	cur := Span{start, end}
	for _, tok := range tokens {
		var next Span
		switch raw[cur.Start] {
		case '{':
			_, err = eachMember(raw[:cur.End], cur.Start, func(name []byte, _, vs, ve int) bool {
				if string(name) == tok {
					next = Span{vs, ve}
					return false
				}
				return true
			})
		case '[':
			idx, ok := ArrayIndex(tok)
			if !ok {
				return nil, false, nil
			}
			n := 0
			_, err = eachElement(raw[:cur.End], cur.Start, func(_, vs, ve int) {
				if n == idx {
					next = Span{vs, ve}
				}
				n++
			})
		default:
			return nil, false, nil
		}
		if err != nil {
			return nil, false, fmt.Errorf("pointer: %w", err)
		}
		if !next.Present() {
			return nil, false, nil
		}
		cur = next
	}
	return raw[cur.Start:cur.End], true, nil
}

// ArrayIndex reads a reference token as an array index: plain digits
// without a leading zero, at most nine of them. "-" (past the end), "01" or
// anything else is not an index.
func ArrayIndex(tok string) (int, bool) {
	if tok == "" || len(tok) > 9 || (len(tok) > 1 && tok[0] == '0') {
		return 0, false
	}
	n := 0
	for _, c := range []byte(tok) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// WholeNumber reads raw (a JSON value, whitespace around it allowed) as a
// whole number from 0 to 2^53−1. A number written with a fraction or an
// exponent is accepted when its value is whole (2.0, 5e2); a negative sign
// (even -0), a fraction, a larger number, a string or any other value is
// refused.
func WholeNumber(raw []byte) (int64, error) {
	start, end, err := wholeValue(raw)
	if err != nil {
		return 0, fmt.Errorf("whole number: %w", err)
	}
	tok := raw[start:end]
	if tok[0] != '-' && (tok[0] < '0' || tok[0] > '9') {
		return 0, errors.New("not a number")
	}
	if tok[0] == '-' {
		return 0, errors.New("a negative number")
	}
	d := readDecimal(tok)
	if !d.integer() {
		return 0, errors.New("not a whole number")
	}
	if d.beyond() {
		return 0, errors.New("a number beyond 2^53-1")
	}
	if d.zero() {
		return 0, nil
	}
	return d.value(), nil
}

// ListLength gives the number of elements of the JSON array raw.
func ListLength(raw []byte) (int, error) {
	start, end, err := wholeValue(raw)
	if err != nil {
		return 0, fmt.Errorf("list length: %w", err)
	}
	if raw[start] != '[' {
		return 0, errors.New("not a list")
	}
	n := 0
	if _, err := eachElement(raw[:end], start, func(_, _, _ int) { n++ }); err != nil {
		return 0, fmt.Errorf("list length: %w", err)
	}
	return n, nil
}

// FoldedDuplicate looks in every object of the JSON value raw for two member
// names that are equal under Unicode simple case folding (strings.EqualFold:
// "total" and "TOTAL"; exact repeats count too). It returns the JSON Pointer
// of the later of the two members. Raw that is not JSON reports nothing
// found; check it with [Inspect] or [Pointer] first. The path holds member
// names from the document: do not log it where argument contents may not go.
func FoldedDuplicate(raw []byte) (path string, found bool) {
	start, _, err := wholeValue(raw)
	if err != nil {
		return "", false
	}
	return foldedIn(raw, start, "", 0)
}

func foldedIn(raw []byte, at int, path string, depth int) (string, bool) {
	if depth > maxDepth {
		return "", false
	}
	var hit string
	var found bool
	switch raw[at] {
	case '{':
		var names []string
		var keys map[string]struct{}
		// The value was read whole by the checker before: walking it cannot fail.
		_, _ = eachMember(raw, at, func(name []byte, _, vs, _ int) bool {
			n := string(name)
			here := path + "/" + escapeToken(n)
			if keys == nil && len(names) < linearNames {
				for _, m := range names {
					if strings.EqualFold(m, n) {
						hit, found = here, true
						return false
					}
				}
				names = append(names, n)
			} else {
				if keys == nil {
					keys = make(map[string]struct{}, 2*linearNames)
					for _, m := range names {
						keys[FoldKey(m)] = struct{}{}
					}
				}
				k := FoldKey(n)
				if _, dup := keys[k]; dup {
					hit, found = here, true
					return false
				}
				keys[k] = struct{}{}
			}
			if p, ok := foldedIn(raw, vs, here, depth+1); ok {
				hit, found = p, true
				return false
			}
			return true
		})
	case '[':
		i := 0
		// The value was read whole by the checker before: walking it cannot fail.
		_, _ = eachElement(raw, at, func(_, vs, _ int) {
			if !found {
				if p, ok := foldedIn(raw, vs, fmt.Sprintf("%s/%d", path, i), depth+1); ok {
					hit, found = p, true
				}
			}
			i++
		})
	}
	return hit, found
}

// FoldKey maps each rune to the smallest rune of its simple-folding orbit,
// so that two strings have one key exactly when strings.EqualFold holds
// ("total" and "TOTAL", "s" and the long s "ſ", "k" and the Kelvin sign
// "K" all share one). Bytes that are not UTF-8 (a lone surrogate escape
// decoded as its own three bytes) are kept as they are.
func FoldKey(s string) string { return string(foldKey([]byte(s))) }

func foldKey(name []byte) []byte {
	out := make([]byte, 0, len(name))
	for i := 0; i < len(name); {
		c := name[i]
		if c < utf8.RuneSelf {
			if c >= 'a' && c <= 'z' {
				c -= 'a' - 'A'
			}
			out = append(out, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(name[i:])
		if r == utf8.RuneError && n == 1 {
			out = append(out, c)
			i++
			continue
		}
		m := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < m {
				m = f
			}
		}
		out = utf8.AppendRune(out, m)
		i += n
	}
	return out
}

// pathAt gives the JSON Pointer of the member whose name begins at off, or
// of the value that begins at off, in the JSON value raw (which a checker
// accepted). It is "" for the whole value.
func pathAt(raw []byte, off int) string {
	var path strings.Builder
	at := skipWS(raw, 0)
	for depth := 0; depth <= maxDepth; depth++ {
		if at == off {
			return path.String()
		}
		next := -1
		switch raw[at] {
		case '{':
			// The value was read whole by the checker before: walking it cannot fail.
			_, _ = eachMember(raw, at, func(name []byte, nameStart, vs, ve int) bool {
				if nameStart == off || (off >= vs && off < ve) {
					path.WriteByte('/')
					path.WriteString(escapeToken(string(name)))
					if nameStart == off {
						next = -2
					} else {
						next = vs
					}
					return false
				}
				return true
			})
		case '[':
			i := 0
			// The value was read whole by the checker before: walking it cannot fail.
			_, _ = eachElement(raw, at, func(_, vs, ve int) {
				if next == -1 && off >= vs && off < ve {
					fmt.Fprintf(&path, "/%d", i)
					next = vs
				}
				i++
			})
		}
		if next == -2 {
			return path.String()
		}
		if next < 0 {
			break
		}
		at = next
	}
	return path.String()
}

func escapeToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
