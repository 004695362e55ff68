package redact

import (
	"encoding/base64"
	"encoding/hex"
	"slices"
	"strings"
	"unicode/utf8"
)

// The decoding detectors: base64, hexadecimal and URL-encoded text is
// decoded and the decoded text scanned again by every detector (up to
// maxDepth decodings deep). A base64 or hexadecimal run whose text holds a
// secret is redacted whole; a URL-encoded secret is redacted where it
// stands, by the kind of the detector that found it.

// minEncodedLen is the shortest base64 or hexadecimal run decoded: 16
// characters are 12 bytes of base64 ("password=x" is 16 characters) and 8
// of hexadecimal.
const minEncodedLen = 16

// DecodeBase64 decodes s as base64 in either alphabet, padded or not. It is
// the decoder the base64 detector uses.
func DecodeBase64(s string) ([]byte, bool) { return decodeB64(s) }

func decodeB64(s string) ([]byte, bool) {
	core := strings.TrimRight(s, "=")
	if len(core) == 0 || len(core)%4 == 1 || len(s)-len(core) > 2 {
		return nil, false
	}
	std := !strings.ContainsAny(core, "-_")
	if !std && strings.ContainsAny(core, "+/") {
		return nil, false
	}
	enc := base64.RawStdEncoding
	if !std {
		enc = base64.RawURLEncoding
	}
	b, err := enc.DecodeString(core)
	if err != nil {
		return nil, false
	}
	return b, true
}

// readable reports whether b is text: UTF-8 with no control character but
// tab, line feed and carriage return.
func readable(b []byte) bool {
	if len(b) == 0 || !utf8.Valid(b) {
		return false
	}
	for _, c := range string(b) {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f || 0x80 <= c && c < 0xa0 {
			return false
		}
	}
	return true
}

// holdsSecret reports whether decoded text holds a secret the detectors
// find, one decoding deeper than sc.
func (r *Redactor) holdsSecret(text string, sc *scan) bool {
	inner := scan{depth: sc.depth + 1, awsKeyID: sc.awsKeyID || hasAWSKeyID(text), joined: sc.joined}
	return len(r.find(text, &inner, true)) > 0
}

// base64Spans are the base64 runs (whole, or their parts between "/" when
// the whole is not) that decode to text holding a secret.
func base64Spans(r *Redactor, s string, sc *scan) []span {
	var out []span
	for _, rn := range b64Runs(s, minEncodedLen) {
		a, e := rn[0], rn[1]
		if r.decodesToSecret(s[a:e], sc) {
			out = append(out, span{a: a, e: e})
			continue
		}
		run := s[a:e]
		if !strings.Contains(run, "/") {
			continue
		}
		at := a
		for part := range strings.SplitSeq(run, "/") {
			if len(part) >= minEncodedLen && r.decodesToSecret(part, sc) {
				out = append(out, span{a: at, e: at + len(part)})
			}
			at += len(part) + 1
		}
	}
	return out
}

func (r *Redactor) decodesToSecret(run string, sc *scan) bool {
	if hexOrDashes(run) {
		return false // ids and digests: the hexadecimal detector reads hexadecimal
	}
	b, ok := decodeB64(run)
	return ok && readable(b) && r.holdsSecret(string(b), sc)
}

// hexOrDashes reports whether s is only hexadecimal digits and dashes.
func hexOrDashes(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isHex(s[i]) && s[i] != '-' {
			return false
		}
	}
	return true
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// hexSpans are the runs of hexadecimal digits (an even number, not inside
// a longer word) that decode to text holding a secret.
func hexSpans(r *Redactor, s string, sc *scan) []span {
	var out []span
	for i := 0; i < len(s); {
		if !isHex(s[i]) || i > 0 && charClass(s[i-1]) < 3 {
			i++
			continue
		}
		j := i
		for j < len(s) && isHex(s[j]) {
			j++
		}
		if j-i >= minEncodedLen && (j-i)%2 == 0 && (j == len(s) || charClass(s[j]) == 3) {
			if b, err := hex.DecodeString(s[i:j]); err == nil && readable(b) && r.holdsSecret(string(b), sc) {
				out = append(out, span{a: i, e: j})
			}
		}
		i = j
	}
	return out
}

// PercentDecode decodes every %XX escape of s and keeps every other byte
// (a "+" stays a "+"). from[i] is where the decoded byte i begins in s;
// from has one more entry, len(s).
func PercentDecode(s string) (decoded string, from []int) {
	var b strings.Builder
	from = make([]int, 0, len(s)+1)
	for i := 0; i < len(s); {
		from = append(from, i)
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 3
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String(), append(from, len(s))
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// hasEscape reports whether s holds a %XX escape.
func hasEscape(s string) bool {
	for i := strings.IndexByte(s, '%'); i >= 0 && i+2 < len(s); {
		if isHex(s[i+1]) && isHex(s[i+2]) {
			return true
		}
		j := strings.IndexByte(s[i+1:], '%')
		if j < 0 {
			return false
		}
		i += 1 + j
	}
	return false
}

// urlSpans decode the text's %XX escapes, scan the decoded text and give
// what is found there where it stands in the text, by its kind. (In
// Redactor.Text the plain detectors ran first, so what is left to find is
// what the decoding made visible; Find may give a secret twice.)
func urlSpans(r *Redactor, s string, sc *scan) []span {
	if !hasEscape(s) {
		return nil
	}
	decoded, from := PercentDecode(s)
	inner := scan{depth: sc.depth + 1, awsKeyID: sc.awsKeyID || hasAWSKeyID(decoded), joined: sc.joined}
	var out []span
	for _, f := range r.find(decoded, &inner, false) {
		out = append(out, span{a: from[f.Start], e: from[f.End], kind: f.Kind})
	}
	return mergeSpans(out)
}

// mergeSpans sorts spans and joins those that overlap (the first one's
// kind names the join).
func mergeSpans(sp []span) []span {
	if len(sp) < 2 {
		return sp
	}
	slices.SortFunc(sp, func(x, y span) int { return x.a - y.a })
	out := sp[:1]
	for _, s := range sp[1:] {
		last := &out[len(out)-1]
		if s.a < last.e {
			last.e = max(last.e, s.e)
			continue
		}
		out = append(out, s)
	}
	return out
}
