// Package redact masks secret-looking values wherever the executor shows a
// tool call's arguments: approval prompts and queue files, reports, logs and
// errors. The tool server always gets the arguments unchanged; nothing here
// touches them.
//
// # Tokens
//
// A secret, or the secret part of a longer text, becomes
//
//	[REDACTED:<kind>:<tag>]
//
// where kind names the detector ([Kinds], "key" for a value under a secret
// member name, "custom" for an expression of the settings) and tag is the
// first 8 hexadecimal characters of SHA-256(salt || secret). The salt is 32
// random bytes the caller keeps in the copy, so an auditor who holds the
// original value can show it was that value ([Verify], [VerifyJSON]) while
// whoever reads only the redacted text cannot test guesses.
//
// # What is redacted
//
// In a JSON document ([Redactor.JSON]): every string value is scanned by the
// detectors and its secret parts replaced; a value under a member whose name
// is a secret key ([BuiltinKeys] and Options.ExtendKeys, compared without
// regard to case) is replaced whole, whatever its type (a non-text value is
// fingerprinted in its RFC 8785 form); null and "" stay as they are. Member
// names are scanned as text too (whether a name is a secret key is decided
// on the name as written). Numbers, true and false are kept, and so is
// member order.
//
// Free text ([Redactor.Text]) is scanned by the detectors; "name=value" and
// "name: value" pairs are found for the built-in pair names and for
// Options.ExtendKeys.
//
// Text already redacted stays as it is: tokens are never scanned, and the
// scan is repeated until it finds nothing more, so redacting twice gives the
// same as redacting once.
package redact

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	// ExtendKeys are further member names whose values are secret.
	ExtendKeys []string
	// ReplaceBuiltin drops the built-in detectors, keys and pair names:
	// only Extend and ExtendKeys are applied.
	ReplaceBuiltin bool
}

// Redactor redacts with one salt and one set of detectors. It is safe for
// concurrent use.
type Redactor struct {
	salt      []byte
	detectors []*detector
	keys      map[string]bool // lower case
}

// New returns a redactor. salt must be SaltSize bytes; an expression of
// o.Extend that is not RE2 is an error naming it.
func New(salt []byte, o Options) (*Redactor, error) {
	if len(salt) != SaltSize {
		return nil, fmt.Errorf("redaction salt: %d bytes, want %d (use NewSalt)", len(salt), SaltSize)
	}
	r := &Redactor{salt: bytes.Clone(salt), keys: map[string]bool{}}
	var pairNames, pairHints []string
	asciiHints := true
	if !o.ReplaceBuiltin {
		r.detectors = append(r.detectors, builtin...)
		for _, k := range BuiltinKeys {
			r.keys[strings.ToLower(k)] = true
		}
		pairNames = append(pairNames, builtinPairNames...)
		pairHints = append(pairHints, builtinPairHints...)
	}
	for i, e := range o.Extend {
		re, err := regexp.Compile(e)
		if err != nil {
			return nil, fmt.Errorf("redaction extend[%d]: not an RE2 expression: %w", i, err)
		}
		r.detectors = append(r.detectors, &detector{kind: KindCustom, re: re})
	}
	for i, k := range o.ExtendKeys {
		if k == "" {
			return nil, fmt.Errorf("redaction extendKeys[%d]: empty", i)
		}
		r.keys[strings.ToLower(k)] = true
		pairNames = append(pairNames, regexp.QuoteMeta(k))
		pairHints = append(pairHints, asciiLower(k))
		if strings.ContainsFunc(k, func(c rune) bool { return c >= 0x80 }) {
			asciiHints = false // (?i) folds more than ASCII: no hint can stand for it
		}
	}
	if !asciiHints {
		pairHints = nil
	}
	if len(pairNames) > 0 {
		r.detectors = append(r.detectors, pairDetector(pairNames, pairHints))
	}
	return r, nil
}

// Salt returns a copy of the salt.
func (r *Redactor) Salt() []byte { return bytes.Clone(r.salt) }

// IsKey reports whether values under the member name are redacted whole.
func (r *Redactor) IsKey(name string) bool { return r.keys[strings.ToLower(name)] }

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
func (r *Redactor) Text(s string) string {
	for range len(s) + 1 { // each pass that changes s shrinks its text outside tokens
		out, changed := r.pass(s)
		if !changed {
			return out
		}
		s = out
	}
	return s
}

// pass runs every detector once over the text outside tokens.
func (r *Redactor) pass(s string) (string, bool) {
	changed := false
	lower := asciiLower(s)
	for _, d := range r.detectors {
		out, ch := r.apply(d, s, lower)
		if ch {
			s, lower, changed = out, asciiLower(out), true
		}
	}
	return s, changed
}

func (r *Redactor) apply(d *detector, s, lower string) (string, bool) {
	var b strings.Builder
	changed := false
	last := 0
	for _, gap := range gaps(s) {
		if !d.mayMatch(lower[gap[0]:gap[1]]) {
			continue
		}
		spans := d.find(s[gap[0]:gap[1]])
		for _, sp := range spans {
			a, e := gap[0]+sp[0], gap[0]+sp[1]
			b.WriteString(s[last:a])
			b.WriteString(r.token(d.kind, s[a:e]))
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
// value was redacted; it never returns the secrets themselves.
func (r *Redactor) Find(s string) []Found {
	var out []Found
	lower := asciiLower(s)
	for _, d := range r.detectors {
		for _, gap := range gaps(s) {
			if !d.mayMatch(lower[gap[0]:gap[1]]) {
				continue
			}
			for _, sp := range d.find(s[gap[0]:gap[1]]) {
				out = append(out, Found{Kind: d.kind, Start: gap[0] + sp[0], End: gap[0] + sp[1]})
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

// JSON returns a redacted copy of the JSON document doc (any JSON value; in
// practice a call's arguments). doc is not modified. An error means doc is
// not one JSON value.
func (r *Redactor) JSON(doc []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var out bytes.Buffer
	if err := r.value(dec, &out, false); err != nil {
		return nil, fmt.Errorf("redact arguments: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("redact arguments: more after the JSON value")
	}
	return out.Bytes(), nil
}

func writeString(out *bytes.Buffer, s string) {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)           // a string always encodes, and a bytes.Buffer takes every write
	out.Truncate(out.Len() - 1) // the encoder's newline
}

func (r *Redactor) value(dec *json.Decoder, out *bytes.Buffer, secret bool) error {
	if secret {
		return r.secretValue(dec, out)
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			return r.object(dec, out)
		case '[':
			return r.array(dec, out)
		default:
			return fmt.Errorf("unexpected %q", t)
		}
	case string:
		writeString(out, r.Text(t))
	case json.Number:
		out.WriteString(t.String())
	case bool:
		if t {
			out.WriteString("true")
		} else {
			out.WriteString("false")
		}
	case nil:
		out.WriteString("null")
	}
	return nil
}

// secretValue writes the value under a secret member's name, redacted whole.
func (r *Redactor) secretValue(dec *json.Decoder, out *bytes.Buffer) error {
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return err
	}
	raw = bytes.TrimSpace(raw)
	if string(raw) == "null" {
		out.WriteString("null")
		return nil
	}
	s, err := secretOfJSON(raw)
	if err != nil {
		return err
	}
	if raw[0] == '"' && (s == "" || wholeTokenRE.MatchString(s)) {
		writeString(out, s)
		return nil
	}
	writeString(out, r.token(KindKey, s))
	return nil
}

// object writes the members of an object whose '{' was read, and its '}'.
func (r *Redactor) object(dec *json.Decoder, out *bytes.Buffer) error {
	out.WriteByte('{')
	for i := 0; dec.More(); i++ {
		kt, err := dec.Token()
		if err != nil {
			return err
		}
		name, ok := kt.(string)
		if !ok {
			return errors.New("a member name that is not text")
		}
		if i > 0 {
			out.WriteByte(',')
		}
		writeString(out, r.Text(name))
		out.WriteByte(':')
		if err := r.value(dec, out, r.IsKey(name)); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return err
	}
	out.WriteByte('}')
	return nil
}

// array writes the elements of an array whose '[' was read, and its ']'.
func (r *Redactor) array(dec *json.Decoder, out *bytes.Buffer) error {
	out.WriteByte('[')
	for i := 0; dec.More(); i++ {
		if i > 0 {
			out.WriteByte(',')
		}
		if err := r.value(dec, out, false); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return err
	}
	out.WriteByte(']')
	return nil
}
