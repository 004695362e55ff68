package canon

import (
	"encoding/binary"
	"strconv"
	"unicode/utf8"

	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
)

// Parse reads text that must already be canonical JSON and returns its
// value: map[string]any, []any, string or int64. Any other value at the top
// is fine. Every deviation from the one canonical spelling is refused with
// code "payload-not-canonical": a repeated or unsorted member name,
// whitespace, a BOM, trailing or empty text, any number other than a plain
// whole number 0 … 2^53−1, true/false/null, nesting deeper than 8, an
// escape that need not be one (or one in capitals, `\/`, or a surrogate
// pair written as escapes), a lone surrogate and invalid UTF-8.
func Parse(text []byte) (any, error) {
	if !utf8.Valid(text) {
		return nil, problem.New(CodeNotCanonical, "the text is not well-formed UTF-8")
	}
	p := parser{text: text}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	if p.pos != len(p.text) {
		return nil, p.notCanonical("text after the value")
	}
	return v, nil
}

type parser struct {
	text []byte
	pos  int
}

func (p *parser) notJSON() error {
	return problem.New(CodeNotCanonical, "the text is not JSON (at byte %d)", p.pos)
}

func (p *parser) notCanonical(what string) error {
	return problem.New(CodeNotCanonical, "the JSON is not in the canonical form: %s (at byte %d)", what, p.pos)
}

func (p *parser) value(depth int) (any, error) {
	if p.pos >= len(p.text) {
		return nil, p.notJSON()
	}
	switch c := p.text[p.pos]; {
	case c == '{':
		if depth >= MaxDepth {
			return nil, errTooDeep()
		}
		return p.object(depth + 1)
	case c == '[':
		if depth >= MaxDepth {
			return nil, errTooDeep()
		}
		return p.array(depth + 1)
	case c == '"':
		return p.string()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range []string{"true", "false", "null"} {
			if len(p.text)-p.pos >= len(lit) && string(p.text[p.pos:p.pos+len(lit)]) == lit {
				return nil, problem.New(CodeNotCanonical, "only objects, lists, strings and whole numbers are allowed (at byte %d)", p.pos)
			}
		}
		return nil, p.notJSON()
	case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		return nil, p.notCanonical("whitespace")
	default:
		return nil, p.notJSON()
	}
}

func (p *parser) object(depth int) (any, error) {
	p.pos++ // '{'
	m := map[string]any{}
	if p.pos < len(p.text) && p.text[p.pos] == '}' {
		p.pos++
		return m, nil
	}
	prev, first := "", true
	for {
		if p.pos >= len(p.text) {
			return nil, p.notJSON()
		}
		if p.text[p.pos] != '"' {
			return nil, p.structural()
		}
		kpos := p.pos
		k, err := p.string()
		if err != nil {
			return nil, err
		}
		if !first && utf16Compare(prev, k) >= 0 {
			p.pos = kpos
			if prev == k {
				return nil, p.notCanonical("a repeated member name")
			}
			return nil, p.notCanonical("members out of order")
		}
		prev, first = k, false
		if err := p.expect(':'); err != nil {
			return nil, err
		}
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		m[k] = v
		if p.pos >= len(p.text) {
			return nil, p.notJSON()
		}
		switch p.text[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return m, nil
		default:
			return nil, p.structural()
		}
	}
}

func (p *parser) array(depth int) (any, error) {
	p.pos++ // '['
	a := []any{}
	if p.pos < len(p.text) && p.text[p.pos] == ']' {
		p.pos++
		return a, nil
	}
	for {
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		if p.pos >= len(p.text) {
			return nil, p.notJSON()
		}
		switch p.text[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return a, nil
		default:
			return nil, p.structural()
		}
	}
}

func (p *parser) expect(c byte) error {
	if p.pos >= len(p.text) {
		return p.notJSON()
	}
	if p.text[p.pos] != c {
		return p.structural()
	}
	p.pos++
	return nil
}

// structural reports an unexpected byte where punctuation belongs.
func (p *parser) structural() error {
	switch p.text[p.pos] {
	case ' ', '\t', '\n', '\r':
		return p.notCanonical("whitespace")
	}
	return p.notJSON()
}

// number reads a whole number 0 … 2^53−1 written plainly.
func (p *parser) number() (any, error) {
	start := p.pos
	end := p.pos
	for end < len(p.text) {
		c := p.text[end]
		if (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
			end++
			continue
		}
		break
	}
	tok := p.text[start:end]
	plain := len(tok) > 0 && len(tok) <= 16
	for _, c := range tok {
		if c < '0' || c > '9' {
			plain = false
		}
	}
	if plain && tok[0] == '0' && len(tok) > 1 {
		return nil, p.notCanonical("a number with a leading zero")
	}
	if !plain {
		return nil, problem.New(CodeNotCanonical, "a number must be a whole number from 0 to 2^53-1, written plainly (at byte %d)", start)
	}
	n, err := strconv.ParseInt(string(tok), 10, 64)
	if err != nil || n > MaxSafeInt {
		return nil, problem.New(CodeNotCanonical, "a number must be a whole number from 0 to 2^53-1, written plainly (at byte %d)", start)
	}
	p.pos = end
	return n, nil
}

// string reads a canonical JSON string starting at its opening quote.
func (p *parser) string() (string, error) {
	p.pos++ // opening quote
	start := p.pos
	// Fast path: no escapes. Eight bytes at a time while none of them is a
	// quote, a backslash or a control character, then byte by byte.
	p.pos = plainRun(p.text, p.pos)
	for p.pos < len(p.text) {
		c := p.text[p.pos]
		if c == '"' {
			s := string(p.text[start:p.pos])
			p.pos++
			return s, nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", p.notCanonical("a control character not escaped")
		}
		p.pos++
	}
	buf := append([]byte(nil), p.text[start:p.pos]...)
	for p.pos < len(p.text) {
		c := p.text[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(buf), nil
		case c < 0x20:
			return "", p.notCanonical("a control character not escaped")
		case c != '\\':
			buf = append(buf, c)
			p.pos++
			continue
		}
		if p.pos+1 >= len(p.text) {
			return "", p.notJSON()
		}
		e := p.text[p.pos+1]
		switch e {
		case '"', '\\':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, err := p.uEscape()
			if err != nil {
				return "", err
			}
			buf = append(buf, byte(r))
			continue
		case '/':
			return "", p.notCanonical("an escape that need not be one")
		default:
			return "", p.notJSON()
		}
		p.pos += 2
	}
	return "", p.notJSON()
}

// plainRun returns the first position from i at which the eight bytes
// there are not all plain string bytes (none a quote, a backslash or below
// 0x20), or where fewer than eight are left.
func plainRun(text []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for i+8 <= len(text) {
		x := binary.LittleEndian.Uint64(text[i:])
		// A byte below 0x20; a byte equal to '"'; a byte equal to '\\'
		// (each test exact in whether any byte of x matches).
		below := (x - ones*0x20) &^ x
		quote := x ^ (ones * '"')
		quote = (quote - ones) &^ quote
		slash := x ^ (ones * '\\')
		slash = (slash - ones) &^ slash
		if (below|quote|slash)&highs != 0 {
			return i
		}
		i += 8
	}
	return i
}

// uEscape reads \uXXXX at p.pos; only a control character that has no
// short escape may be written this way, in lowercase hex.
func (p *parser) uEscape() (rune, error) {
	if p.pos+6 > len(p.text) {
		return 0, p.notJSON()
	}
	var r rune
	upper := false
	for _, h := range p.text[p.pos+2 : p.pos+6] {
		r <<= 4
		switch {
		case h >= '0' && h <= '9':
			r |= rune(h - '0')
		case h >= 'a' && h <= 'f':
			r |= rune(h-'a') + 10
		case h >= 'A' && h <= 'F':
			r |= rune(h-'A') + 10
			upper = true
		default:
			return 0, p.notJSON()
		}
	}
	if r >= 0xD800 && r <= 0xDFFF && !p.pairFollows(r) {
		return 0, problem.New(CodeNotCanonical, "a string is not well-formed unicode: a lone surrogate (at byte %d)", p.pos)
	}
	if upper {
		return 0, p.notCanonical("an escape in capitals")
	}
	switch r {
	case '\b', '\f', '\n', '\r', '\t':
		return 0, p.notCanonical("an escape that has a short form")
	}
	if r >= 0x20 {
		return 0, p.notCanonical("an escape that need not be one")
	}
	p.pos += 6
	return r, nil
}

// pairFollows reports whether the surrogate escape at p.pos is a high
// surrogate followed by a low-surrogate escape (a well-formed pair, which
// is still not canonical).
func (p *parser) pairFollows(r rune) bool {
	if r > 0xDBFF {
		return false
	}
	q := p.pos + 6
	if q+6 > len(p.text) || p.text[q] != '\\' || p.text[q+1] != 'u' {
		return false
	}
	lo, err := strconv.ParseUint(string(p.text[q+2:q+6]), 16, 32)
	return err == nil && lo >= 0xDC00 && lo <= 0xDFFF
}
