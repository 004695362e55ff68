package canon

import (
	"errors"
	"unicode/utf16"
	"unicode/utf8"
)

// UTF16Less reports whether a sorts before b when both are compared as
// sequences of UTF-16 code units, the member order of RFC 8785. It differs
// from Go's byte order only where a character above U+FFFF meets one in
// U+E000 … U+FFFF. Both strings are expected to be valid UTF-8.
func UTF16Less(a, b string) bool { return utf16Compare(a, b) < 0 }

// utf16Compare compares a and b by UTF-16 code units: -1, 0 or +1.
func utf16Compare(a, b string) int {
	for len(a) > 0 && len(b) > 0 {
		if a[0] < utf8.RuneSelf && b[0] < utf8.RuneSelf {
			if a[0] != b[0] {
				if a[0] < b[0] {
					return -1
				}
				return 1
			}
			a, b = a[1:], b[1:]
			continue
		}
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			ka, kb := firstUnit(ra), firstUnit(rb)
			if ka != kb {
				if ka < kb {
					return -1
				}
				return 1
			}
			// Same high surrogate: the low surrogates decide, and they
			// are ordered like the runes.
			if ra < rb {
				return -1
			}
			return 1
		}
		a, b = a[na:], b[nb:]
	}
	switch {
	case len(a) == len(b):
		return 0
	case len(a) < len(b):
		return -1
	default:
		return 1
	}
}

// firstUnit is the first UTF-16 code unit of r.
func firstUnit(r rune) rune {
	if r >= 0x10000 {
		return 0xD800 + ((r - 0x10000) >> 10)
	}
	return r
}

// The faults UnicodeEscape reports.
var (
	ErrBadEscape     = errors.New(`a \u escape without four hex digits`)
	ErrLoneSurrogate = errors.New("a lone surrogate")
)

// UnicodeEscape reads the JSON \u escape whose backslash is at text[at]
// and, when it is a high surrogate, the low-surrogate escape that must
// follow it. It returns the character and where the escape (or the pair)
// ends. It refuses with ErrBadEscape, end at, four hex digits that are not
// there; with ErrLoneSurrogate, end after the first escape, a surrogate not
// paired as UTF-16 requires (a low one, or a high one not followed by a
// low-surrogate escape).
func UnicodeEscape(text []byte, at int) (r rune, end int, err error) {
	u, ok := hex4(text, at+2)
	if !ok {
		return 0, at, ErrBadEscape
	}
	end = at + 6
	switch {
	case u >= 0xDC00 && u <= 0xDFFF:
		return 0, end, ErrLoneSurrogate
	case u >= 0xD800 && u <= 0xDBFF:
		if end+1 < len(text) && text[end] == '\\' && text[end+1] == 'u' {
			if lo, ok := hex4(text, end+2); ok && lo >= 0xDC00 && lo <= 0xDFFF {
				return utf16.DecodeRune(u, lo), end + 6, nil
			}
		}
		return 0, end, ErrLoneSurrogate
	}
	return u, end, nil
}

// hex4 reads the four hex digits at text[at:] as a UTF-16 code unit.
func hex4(text []byte, at int) (rune, bool) {
	if at+4 > len(text) {
		return 0, false
	}
	var u rune
	for _, h := range text[at : at+4] {
		u <<= 4
		switch {
		case h >= '0' && h <= '9':
			u |= rune(h - '0')
		case h >= 'a' && h <= 'f':
			u |= rune(h-'a') + 10
		case h >= 'A' && h <= 'F':
			u |= rune(h-'A') + 10
		default:
			return 0, false
		}
	}
	return u, true
}
