package redact

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// pairs finds the values of "name=value" and "name: value" pairs (quoted or
// not, in prose, env lines, query strings, JSON or YAML text) whose name is
// a secret key for the redactor ([Redactor.IsKey]).
var pairs = &detector{kind: KindPassword, spans: pairSpans}

// pairName is a name and its separator: one or two words of letters,
// digits, "_", "." and "-", an optional closing quote, then ":" or "=".
// The value is read by hand (readValue).
var pairName = regexp.MustCompile(`(?:^|[^\pL\pN_.-])([\pL\pN_.-]+(?: [\pL\pN_.-]+)?)["']?[ \t]*([:=])[ \t]*`)

// headerNames are folded pair names whose unquoted value after ":" is the
// rest of the line (an HTTP header's), past an authentication scheme.
var headerNames = map[string]bool{"authorization": true, "proxyauthorization": true, "cookie": true, "setcookie": true}

// authSchemes are the HTTP authentication schemes (folded) kept in the clear
// before a header's credentials.
var authSchemes = map[string]bool{"bearer": true, "basic": true, "token": true, "digest": true, "negotiate": true,
	"ntlm": true, "apikey": true, "key": true, "hoba": true, "mutual": true, "aws4hmacsha256": true, "dpop": true}

func pairSpans(r *Redactor, s string, _ *scan) []span {
	if !strings.ContainsAny(s, ":=") {
		return nil
	}
	var out []span
	for at := 0; at < len(s); {
		m := pairName.FindStringSubmatchIndex(s[at:])
		if m == nil {
			break
		}
		name := s[at+m[2] : at+m[3]]
		sep := s[at+m[4]]
		next := at + m[1] // just past the separator and its blanks
		if !r.isPairKey(name) {
			at = next
			continue
		}
		a, e, end := readValue(s, next, sep == ':' && headerNames[FoldName(name)])
		if e > a {
			out = append(out, span{a: a, e: e})
		}
		at = max(end, next)
	}
	return out
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
