package redact

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Printable returns s as it may be written to a terminal or a log line:
// every rune Unicode classes as a control (C0, DEL, C1: so every escape
// sequence loses its ESC or CSI), a format character (the bidirectional
// embeddings, overrides and isolates U+202A–U+202E and U+2066–U+2069, the
// marks U+200E, U+200F and U+061C, zero-width characters, the tag
// characters) or a line or paragraph separator (U+2028, U+2029) is
// written as an escape: \n, \r, \t, \xHH below U+0080, \uHHHH, \UHHHHHHHH
// above. A byte that is not UTF-8 is written \xHH. Everything else,
// backslashes too, is kept: the form is for reading, not for parsing back.
func Printable(s string) string {
	i := strings.IndexFunc(s, needsEscape)
	if i < 0 && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		c, n := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && n <= 1 {
			fmt.Fprintf(&b, `\x%02x`, s[i])
			i++
			continue
		}
		if needsEscape(c) {
			writeEscape(&b, c)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// PrintableLines is Printable for text of several lines: each line feed is
// kept, each line made Printable.
func PrintableLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Printable(l)
	}
	return strings.Join(lines, "\n")
}

func needsEscape(c rune) bool {
	if c < utf8.RuneSelf {
		return c < 0x20 || c == 0x7f
	}
	return unicode.In(c, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp)
}

func writeEscape(b *strings.Builder, c rune) {
	switch {
	case c == '\n':
		b.WriteString(`\n`)
	case c == '\r':
		b.WriteString(`\r`)
	case c == '\t':
		b.WriteString(`\t`)
	case c < 0x80:
		fmt.Fprintf(b, `\x%02x`, c)
	case c <= 0xffff:
		fmt.Fprintf(b, `\u%04x`, c)
	default:
		fmt.Fprintf(b, `\U%08x`, c)
	}
}

// PrintableJSON returns the JSON text doc with every rune [Printable]
// escapes, and DEL and the C1 controls, written as a JSON escape (\uHHHH,
// a surrogate pair above U+FFFF), and every byte that is not UTF-8 as
// \ufffd. Such runes can stand only inside strings, so the result is the
// same JSON value, safe to print on a terminal. (Go's encoder escapes the
// C0 controls already, not the rest.)
func PrintableJSON(doc []byte) []byte {
	clean := true
	for i := 0; i < len(doc); {
		c, n := utf8.DecodeRune(doc[i:])
		if c == utf8.RuneError && n <= 1 || c >= 0x7f && needsEscape(c) {
			clean = false
			break
		}
		i += n
	}
	if clean {
		return doc
	}
	out := make([]byte, 0, len(doc)+32)
	for i := 0; i < len(doc); {
		c, n := utf8.DecodeRune(doc[i:])
		switch {
		case c == utf8.RuneError && n <= 1:
			out = append(out, `\ufffd`...)
		case c >= 0x7f && needsEscape(c):
			if c > 0xffff {
				hi, lo := utf16Pair(c)
				out = fmt.Appendf(out, `\u%04x\u%04x`, hi, lo)
			} else {
				out = fmt.Appendf(out, `\u%04x`, c)
			}
		default:
			out = append(out, doc[i:i+n]...)
		}
		i += n
	}
	return out
}

func utf16Pair(c rune) (hi, lo rune) {
	c -= 0x10000
	return 0xd800 + c>>10&0x3ff, 0xdc00 + c&0x3ff
}
