package contentrules

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPatternMatch(t *testing.T) {
	for _, c := range []struct {
		pattern, text string
		want          bool
	}{
		{"**settings.json", "settings.json", true},
		{"**settings.json", "/home/me/proj/settings.json", true},
		{"**settings.json", "my-settings.json", true}, // a pattern catches characters, not a meaning
		{"**settings.json", "settings.json.", false},
		{"**settings.json", "Settings.json", false},
		{"**/settings.json", `C:\proj\settings.json`, true},
		{"**/settings.json", "settings.json", false},
		{`**\settings.json`, "/a/settings.json", true},
		{"safe/**", `safe\x`, true},
		{"safe/**", "safe/", true},
		{"safe/**", "safe", false},
		{"*.json", "a.json", true},
		{"*.json", "a/b.json", false},
		{"*.json", `a\b.json`, false},
		{"*.json", ".json", true},
		{"*/*.json", "a/b.json", true},
		{"?.json", "a.json", true},
		{"?.json", "é.json", true},
		{"?.json", "ab.json", false},
		{"?.json", "/.json", false},
		{"?", "\U0001F600", true},
		{"a***b", "a/x/b", true}, // a run of three stars is "**"
		{"a*b", "a/b", false},
		{"a*b", "ab", true},
		{"a**", "a", true},
		{"**", "", true},
		{"*", "", true},
		{"*", "/", false},
		{"x", "", false},
		{"[a]", "[a]", true}, // nothing else is special
		{"a.c", "abc", false},
		{"*a*a*a*a*a*b", strings.Repeat("a", 200), false},
		{"**a**a**a**a**b", strings.Repeat("a", 200) + "b", true},
	} {
		p := compilePattern(c.pattern)
		if got := p.match(c.text); got != c.want {
			t.Errorf("%q matching %q = %v, want %v", c.pattern, c.text, got, c.want)
		}
		if got := refMatch([]rune(c.pattern), []rune(c.text)); got != c.want {
			t.Errorf("reference: %q matching %q = %v, want %v", c.pattern, c.text, got, c.want)
		}
	}
}

func TestPatternParts(t *testing.T) {
	for _, c := range []struct {
		pattern string
		parts   int
	}{
		{"**settings.json", 14},
		{"a***b", 3},
		{"?/*", 3},
		{"éé", 2},
		{"*a*", 3},
	} {
		if got := patternParts(c.pattern); got != c.parts {
			t.Errorf("patternParts(%q) = %d, want %d", c.pattern, got, c.parts)
		}
	}
}

// TestPatternLongAcrossWords checks patterns longer than one 64-bit word
// (the carry between words).
func TestPatternLongAcrossWords(t *testing.T) {
	for _, n := range []int{62, 63, 64, 65, 127, 128, 129, 300} {
		pat := strings.Repeat("a", n-1) + "*"
		p := compilePattern(pat)
		if !p.match(strings.Repeat("a", n-1)) || !p.match(strings.Repeat("a", n+5)) || p.match(strings.Repeat("a", n-2)) {
			t.Errorf("literal run of %d then star matches wrongly", n-1)
		}
		pat = strings.Repeat("?*", n)
		p = compilePattern(pat)
		if !p.match(strings.Repeat("b", n)) || p.match(strings.Repeat("b", n-1)) || p.match(strings.Repeat("b", n-1)+"/") {
			t.Errorf("%d of ?* match wrongly", n)
		}
	}
}

// refMatch is the plain recursive reading of a pattern, the reference the
// automaton is compared with. It is memoised on (pattern, text) positions
// only so that the fuzz test stays quick.
func refMatch(p, s []rune) bool {
	memo := map[[2]int]bool{}
	var m func(i, j int) bool
	m = func(i, j int) bool {
		key := [2]int{i, j}
		if v, ok := memo[key]; ok {
			return v
		}
		var r bool
		switch {
		case i == len(p):
			r = j == len(s)
		case p[i] == '*':
			k := i
			for k < len(p) && p[k] == '*' {
				k++
			}
			for x := j; x <= len(s); x++ {
				if m(k, x) {
					r = true
					break
				}
				if x < len(s) && k-i == 1 && isSep(s[x]) {
					break
				}
			}
		case j == len(s):
			r = false
		case p[i] == '?':
			r = !isSep(s[j]) && m(i+1, j+1)
		case isSep(p[i]):
			r = isSep(s[j]) && m(i+1, j+1)
		default:
			r = s[j] == p[i] && m(i+1, j+1)
		}
		memo[key] = r
		return r
	}
	return m(0, 0)
}

// FuzzPattern compares the automaton with the backtracking reference on
// short patterns and texts.
func FuzzPattern(f *testing.F) {
	for _, s := range [][2]string{
		{"**settings.json", "my-settings.json"}, {"**/settings.json", `C:\p\settings.json`}, {"*.?", "a.b"},
		{"a***b", "a/b"}, {"*/*", `x\y`}, {"?*?", "é/"}, {"", ""}, {"**", "/"}, {"*a*", "bab"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pat, text string) {
		if !utf8.ValidString(pat) || !utf8.ValidString(text) {
			return
		}
		p, s := []rune(pat), []rune(text)
		if len(p) > 24 || len(s) > 32 {
			return
		}
		want := refMatch(p, s)
		if got := compilePattern(pat).match(text); got != want {
			t.Fatalf("%q matching %q: automaton %v, reference %v", pat, text, got, want)
		}
	})
}
