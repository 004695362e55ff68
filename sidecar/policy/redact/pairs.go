package redact

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// pairs finds the values of "name=value" and "name: value" pairs (quoted or
// not, in prose, env lines, query strings, JSON or YAML text) whose name is
// a secret key for the redactor ([Redactor.IsKey]).
var pairs = &detector{kind: KindPassword, spans: pairSpans}

// headerNames are folded pair names whose unquoted value after ":" is the
// rest of the line (an HTTP header's), past an authentication scheme.
var headerNames = map[string]bool{"authorization": true, "proxyauthorization": true, "cookie": true, "setcookie": true}

// authSchemes are the HTTP authentication schemes (folded) kept in the clear
// before a header's credentials.
var authSchemes = map[string]bool{"bearer": true, "basic": true, "token": true, "digest": true, "negotiate": true,
	"ntlm": true, "apikey": true, "key": true, "hoba": true, "mutual": true, "aws4hmacsha256": true, "dpop": true}

func pairSpans(r *Redactor, s string, _ *scan) []span {
	var out []span
	for at := 0; at < len(s); {
		i := strings.IndexAny(s[at:], ":=")
		if i < 0 {
			break
		}
		i += at
		at = i + 1
		name := pairNameBefore(s, i)
		if name == "" || !r.isPairKey(name) {
			continue
		}
		next := i + 1
		for next < len(s) && (s[next] == ' ' || s[next] == '\t') {
			next++
		}
		a, e, end := readValue(s, next, s[i] == ':' && headerNames[FoldName(name)])
		if e > a {
			out = append(out, span{a: a, e: e})
		}
		at = max(end, next)
	}
	return out
}

// pairNameBefore is the name of a pair whose separator is s[i]: one or two
// words of letters, digits, "_", "." and "-" (two joined by a space), then
// an optional closing quote and blanks before the separator; "" when there
// is none.
func pairNameBefore(s string, i int) string {
	j := i
	for j > 0 && (s[j-1] == ' ' || s[j-1] == '\t') {
		j--
	}
	if j > 0 && (s[j-1] == '"' || s[j-1] == '\'') {
		j--
	}
	end := j
	start := nameStart(s, end)
	if start == end {
		return ""
	}
	if start > 1 && s[start-1] == ' ' {
		if w := nameStart(s, start-1); w < start-1 {
			start = w
		}
	}
	return s[start:end]
}

// nameStart is where the run of name characters ending at s[end] begins.
func nameStart(s string, end int) int {
	for end > 0 {
		c, n := utf8.DecodeLastRuneInString(s[:end])
		if !(c < utf8.RuneSelf && (isAlnum(byte(c)) || c == '_' || c == '.' || c == '-') ||
			c >= utf8.RuneSelf && (unicode.IsLetter(c) || unicode.IsDigit(c))) {
			break
		}
		end -= n
	}
	return end
}

// isPairKey is IsKey for a pair's name of one or two words: its last word,
// or both ("new password", "api key", "Client Secret").
func (r *Redactor) isPairKey(name string) bool {
	if i := strings.LastIndexByte(name, ' '); i >= 0 && r.IsKey(name[i+1:]) {
		return true
	}
	return r.IsKey(name)
}

// readValue reads the value at s[i:]: a quoted one (up to its closing
// quote, past backslash escapes; it may not begin with a blank), or an
// unquoted one (up to a blank, a quote, "&", "," or ";"; for a header, up
// to the end of the line, past a scheme). It returns the secret's bytes
// [a, e) and where reading ended.
func readValue(s string, i int, header bool) (a, e, end int) {
	if i >= len(s) {
		return i, i, i
	}
	if q := s[i]; q == '"' || q == '\'' {
		j := i + 1
		if j >= len(s) || isBlank(s[j]) || s[j] == q {
			return i, i, j
		}
		for j < len(s) && s[j] != q {
			if s[j] == '\\' && q == '"' {
				j++
			}
			j++
		}
		return i + 1, min(j, len(s)), min(j+1, len(s))
	}
	if header {
		j := i
		for j < len(s) && s[j] != '\n' && s[j] != '\r' {
			j++
		}
		a = i
		if w := wordEnd(s, i); w < j && s[w] == ' ' && authSchemes[FoldName(s[i:w])] {
			a = w
			for a < j && s[a] == ' ' {
				a++
			}
		}
		e = j
		for e > a && isBlank(s[e-1]) {
			e--
		}
		return a, e, j
	}
	j := i
	for j < len(s) && !isBlank(s[j]) && !strings.ContainsRune(`"'&,;`, rune(s[j])) {
		j++
	}
	return i, j, j
}

func isBlank(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// wordEnd is the end of the run of letters, digits and "-" at s[i:].
func wordEnd(s string, i int) int {
	for i < len(s) {
		c, n := utf8.DecodeRuneInString(s[i:])
		if !(unicode.IsLetter(c) || unicode.IsDigit(c) || c == '-') {
			break
		}
		i += n
	}
	return i
}
