package canon

import (
	"errors"
	"testing"
)

func TestUnicodeEscape(t *testing.T) {
	for _, c := range []struct {
		name, text string
		at         int
		r          rune
		end        int
		err        error
	}{
		{"a letter", `\u0041`, 0, 'A', 6, nil},
		{"capitals and text after", `x\u00E9y`, 1, 'é', 7, nil},
		{"a pair", `\ud83d\ude00`, 0, '\U0001F600', 12, nil},
		{"a pair in capitals", `\uD83D\uDE00!`, 0, '\U0001F600', 12, nil},
		{"three hex digits", `\u004`, 0, 0, 0, ErrBadEscape},
		{"a non-hex digit", `a\u00g1`, 1, 0, 1, ErrBadEscape},
		{"a lone low surrogate", `\udc00\u0041`, 0, 0, 6, ErrLoneSurrogate},
		{"a high surrogate at the end", `\ud800`, 0, 0, 6, ErrLoneSurrogate},
		{"a high surrogate before text", `\ud800x\udc00`, 0, 0, 6, ErrLoneSurrogate},
		{"a high surrogate before a non-surrogate", `\ud800\u0041`, 0, 0, 6, ErrLoneSurrogate},
		{"a high surrogate before a short escape", `\ud800\udc0`, 0, 0, 6, ErrLoneSurrogate},
		{"two high surrogates", `\ud800\ud800`, 0, 0, 6, ErrLoneSurrogate},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, end, err := UnicodeEscape([]byte(c.text), c.at)
			if r != c.r || end != c.end || !errors.Is(err, c.err) {
				t.Errorf("UnicodeEscape(%q, %d) = %q, %d, %v; want %q, %d, %v", c.text, c.at, r, end, err, c.r, c.end, c.err)
			}
		})
	}
}
