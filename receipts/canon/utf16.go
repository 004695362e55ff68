package canon

import "unicode/utf8"

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
