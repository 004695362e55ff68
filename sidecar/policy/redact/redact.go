package redact

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/gowebpki/jcs"
)

// SaltSize is the length of a salt in bytes.
const SaltSize = 32

// NewSalt returns SaltSize random bytes.
func NewSalt() []byte {
	b := make([]byte, SaltSize)
	rand.Read(b) // never fails (crypto/rand crashes the program instead)
	return b
}

// Options extend or replace the built-in detectors.
type Options struct {
	// Extend holds RE2 expressions of further secrets. Where an expression
	// has capture groups, the first group that takes part in a match is
	// the secret part; otherwise the whole match is.
	Extend []string
	// ExtendKeys are further member names whose values are secret. A name
	// is compared as the built-in ones are ([FoldName]: case and
	// separators do not count), and matches names that end in it.
	ExtendKeys []string
	// ReplaceBuiltin drops the built-in detectors and secret names: only
	// Extend and ExtendKeys are applied.
	ReplaceBuiltin bool
}

// Redactor redacts with one salt and one set of detectors. It is safe for
// concurrent use.
type Redactor struct {
	salt       []byte
	detectors  []*detector
	builtin    bool     // the built-in secret names are on
	extendKeys []string // folded
}

// New returns a redactor. salt must be SaltSize bytes; an expression of
// o.Extend that is not RE2 is an error naming it.
func New(salt []byte, o Options) (*Redactor, error) {
	if len(salt) != SaltSize {
		return nil, fmt.Errorf("redaction salt: %d bytes, want %d (use NewSalt)", len(salt), SaltSize)
	}
	r := &Redactor{salt: bytes.Clone(salt), builtin: !o.ReplaceBuiltin}
	if r.builtin {
		r.detectors = append(r.detectors, regexDetectors...)
	}
	for i, e := range o.Extend {
		re, err := regexp.Compile(e)
		if err != nil {
			return nil, fmt.Errorf("redaction extend[%d]: not an RE2 expression: %w", i, err)
		}
		r.detectors = append(r.detectors, &detector{kind: KindCustom, re: re})
	}
	for i, k := range o.ExtendKeys {
		f := FoldName(k)
		if f == "" {
			return nil, fmt.Errorf("redaction extendKeys[%d]: %q has no letter or digit", i, k)
		}
		r.extendKeys = append(r.extendKeys, f)
	}
	if r.builtin || len(r.extendKeys) > 0 {
		r.detectors = append(r.detectors, pairs)
	}
	if r.builtin {
		r.detectors = append(r.detectors, afterCustom...)
	}
	return r, nil
}

// Salt returns a copy of the salt.
func (r *Redactor) Salt() []byte { return bytes.Clone(r.salt) }

// IsKey reports whether values under the member name are redacted whole:
// the name is a built-in secret name ([IsSecretName]) or ends in one of
// Options.ExtendKeys, compared by [FoldName]. A name that is a token is
// not a key (it was a secret, shown by its tag).
func (r *Redactor) IsKey(name string) bool {
	if isToken(name) {
		return false
	}
	return r.isFoldedKey(FoldName(name))
}

func (r *Redactor) isFoldedKey(n string) bool {
	if r.builtin && secretName(n) {
		return true
	}
	if len(r.extendKeys) == 0 {
		return false
	}
	bare := stripCarriers(n)
	for _, k := range r.extendKeys {
		if strings.HasSuffix(n, k) || strings.HasSuffix(bare, k) {
			return true
		}
	}
	return false
}

// Tag is the first 8 hexadecimal characters of SHA-256(salt || secret).
func Tag(salt []byte, secret string) string {
	h := sha256.New()
	h.Write(salt)
	h.Write([]byte(secret))
	return hex.EncodeToString(h.Sum(nil))[:8]
}

func (r *Redactor) token(kind, secret string) string {
	return "[REDACTED:" + kind + ":" + Tag(r.salt, secret) + "]"
}

// tokenRE is what a token looks like; gaps and tokenLen find them by hand
// (faster), and the tests hold them to this.
var tokenRE = regexp.MustCompile(`\[REDACTED:[a-z0-9-]{1,32}:[0-9a-f]{8}\]`)
var wholeTokenRE = regexp.MustCompile(`^\[REDACTED:([a-z0-9-]{1,32}):([0-9a-f]{8})\]$`)

// ParseToken splits a token into its kind and tag.
func ParseToken(s string) (kind, tag string, ok bool) {
	m := wholeTokenRE.FindStringSubmatch(s)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

// Verify reports whether token is what original redacts to under salt: the
// auditor's check. original is the secret text itself (the secret part, for
// a token inside a longer text).
func Verify(salt []byte, original, token string) bool {
	_, tag, ok := ParseToken(token)
	return ok && Tag(salt, original) == tag
}

// VerifyJSON is Verify for a value redacted whole under a secret key, given
// as the JSON it was: a string by its text, any other value by its RFC 8785
// form (as [Redactor.JSON] fingerprints it).
func VerifyJSON(salt []byte, original []byte, token string) bool {
	s, err := secretOfJSON(original)
	return err == nil && Verify(salt, s, token)
}

func secretOfJSON(raw []byte) (string, error) {
	var s string
	if bytes.HasPrefix(bytes.TrimLeft(raw, " \t\r\n"), []byte(`"`)) {
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		return s, nil
	}
	c, err := jcs.Transform(raw)
	if err != nil {
		// A number beyond what RFC 8785 can write: its compact text.
		var b bytes.Buffer
		if cerr := json.Compact(&b, raw); cerr != nil {
			return "", cerr
		}
		return b.String(), nil
	}
	return string(c), nil
}

// Text returns s with the secret parts the detectors find replaced by tokens.
func (r *Redactor) Text(s string) string { return r.text(s, &scan{}) }

// text is Text in a call's context (or none).
func (r *Redactor) text(s string, call *scan) string {
	for range len(s) + 1 { // each pass that changes s shrinks its text outside tokens
		out, changed := r.pass(s, call)
		if !changed {
			return out
		}
		s = out
	}
	return s
}

// pass runs every detector once over the text outside tokens.
func (r *Redactor) pass(s string, call *scan) (string, bool) {
	changed := false
	lower, gs := asciiLower(s), gaps(s)
	sc := *call
	sc.awsKeyID = call.awsKeyID || hasAWSKeyID(s)
	for _, d := range r.detectors {
		if !d.runs(&sc) {
			continue
		}
		out, ch := r.apply(d, s, lower, gs, &sc)
		if ch {
			s, lower, gs, changed = out, asciiLower(out), gaps(out), true
			sc.awsKeyID = call.awsKeyID || hasAWSKeyID(s)
		}
	}
	return s, changed
}

func (r *Redactor) apply(d *detector, s, lower string, gs [][2]int, sc *scan) (string, bool) {
	var b strings.Builder
	changed := false
	last := 0
	for _, gap := range gs {
		if !d.mayMatch(lower[gap[0]:gap[1]]) {
			continue
		}
		for _, sp := range d.find(r, s[gap[0]:gap[1]], sc) {
			a, e := gap[0]+sp.a, gap[0]+sp.e
			if a < last || e <= a { // a detector's spans are in order and apart; this holds it to that
				continue
			}
			kind := d.kind
			if sp.kind != "" {
				kind = sp.kind
			}
			b.WriteString(s[last:a])
			b.WriteString(r.token(kind, s[a:e]))
			last = e
			changed = true
		}
	}
	if !changed {
		return s, false
	}
	b.WriteString(s[last:])
	return b.String(), true
}

// asciiLower maps A-Z to a-z and keeps every other byte, so offsets agree.
func asciiLower(s string) string {
	i := strings.IndexFunc(s, func(c rune) bool { return c >= 'A' && c <= 'Z' })
	if i < 0 {
		return s
	}
	b := []byte(s)
	for j := i; j < len(b); j++ {
		if c := b[j]; c >= 'A' && c <= 'Z' {
			b[j] = c + 'a' - 'A'
		}
	}
	return string(b)
}

const tokenPrefix = "[REDACTED:"

// isToken reports whether s is one token and nothing else (wholeTokenRE,
// by hand).
func isToken(s string) bool { return len(s) > 0 && tokenLen(s) == len(s) }

// tokenLen is the length of the token s begins with (tokenRE at the start
// of s), or 0.
func tokenLen(s string) int {
	if !strings.HasPrefix(s, tokenPrefix) {
		return 0
	}
	i := len(tokenPrefix)
	k := i
	for k < len(s) && k-i < 33 && (s[k] >= 'a' && s[k] <= 'z' || s[k] >= '0' && s[k] <= '9' || s[k] == '-') {
		k++
	}
	if k == i || k-i > 32 || k >= len(s) || s[k] != ':' {
		return 0
	}
	k++
	for j := 0; j < 8; j++ {
		if k >= len(s) || !(s[k] >= '0' && s[k] <= '9' || s[k] >= 'a' && s[k] <= 'f') {
			return 0
		}
		k++
	}
	if k >= len(s) || s[k] != ']' {
		return 0
	}
	return k + 1
}

// gaps are the ranges of s outside tokens.
func gaps(s string) [][2]int {
	if !strings.Contains(s, tokenPrefix) {
		if s == "" {
			return nil
		}
		return [][2]int{{0, len(s)}}
	}
	var out [][2]int
	at, from := 0, 0
	for {
		i := strings.Index(s[from:], tokenPrefix)
		if i < 0 {
			break
		}
		i += from
		n := tokenLen(s[i:])
		if n == 0 {
			from = i + 1
			continue
		}
		if i > at {
			out = append(out, [2]int{at, i})
		}
		at, from = i+n, i+n
	}
	if at < len(s) {
		out = append(out, [2]int{at, len(s)})
	}
	return out
}

// Find reports the secret parts of s (outside tokens) the detectors find in
// one pass, as kind and byte range. For tests and for telling a user why a
// value was redacted; it never returns the secrets themselves. Parts found
// by two detectors may overlap.
func (r *Redactor) Find(s string) []Found { return r.find(s, &scan{}, false) }

// find is Find in a context; first stops at the first part found.
func (r *Redactor) find(s string, call *scan, first bool) []Found {
	var out []Found
	sc := *call
	sc.awsKeyID = call.awsKeyID || hasAWSKeyID(s)
	lower := asciiLower(s)
	gs := gaps(s)
	for _, d := range r.detectors {
		if !d.runs(&sc) {
			continue
		}
		for _, gap := range gs {
			if !d.mayMatch(lower[gap[0]:gap[1]]) {
				continue
			}
			for _, sp := range d.find(r, s[gap[0]:gap[1]], &sc) {
				if sp.e <= sp.a {
					continue
				}
				kind := d.kind
				if sp.kind != "" {
					kind = sp.kind
				}
				out = append(out, Found{Kind: kind, Start: gap[0] + sp.a, End: gap[0] + sp.e})
				if first {
					return out
				}
			}
		}
	}
	return out
}

// Found is one secret part found: its kind and where it is.
type Found struct {
	Kind       string
	Start, End int
}
