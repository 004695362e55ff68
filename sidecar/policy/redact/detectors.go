package redact

import (
	"encoding/base64"
	"regexp"
	"strings"
)

// Kinds of tokens.
const (
	KindPrivateKey       = "private-key"       // a PEM private key block (to the end of the text if it has no END line)
	KindJWT              = "jwt"               // a JSON Web Token: eyJ….eyJ….signature
	KindAnthropic        = "anthropic"         // sk-ant-…
	KindOpenAI           = "openai"            // sk-…, sk-proj-…, sk-svcacct-…, sk-admin-…
	KindGitHub           = "github"            // ghp_, gho_, ghu_, ghs_, ghr_, github_pat_
	KindSlack            = "slack"             // xoxb-, xoxp-, xoxa-, xoxo-, xoxs-, xoxr-, xoxe-
	KindStripe           = "stripe"            // sk_live_, sk_test_, rk_live_, rk_test_
	KindGoogle           = "google"            // AIza + 35, and OAuth access tokens ya29.…
	KindAzure            = "azure"             // an Entra ID (Azure AD) client secret: 3 characters, a digit, Q~, 31-34 more
	KindAWSKeyID         = "aws-key-id"        // AKIA, ASIA, ABIA, ACCA + 16
	KindAWSSecret        = "aws-secret"        // 40 characters of AWS's shape: after an aws…secret name, beside a key id, or random-looking
	KindConnectionString = "connection-string" // the password of scheme://user:password@host
	KindBearer           = "bearer"            // the token after "Bearer "
	KindBasic            = "basic"             // the credentials after "Basic " (base64 of user:password)
	KindPassword         = "password"          // the value of a name=value or name: value pair whose name is a secret name
	KindEntropy          = "entropy"           // a long random-looking value
	KindBase64           = "base64"            // base64 that decodes to text holding a secret
	KindHex              = "hex"               // hexadecimal that decodes to text holding a secret
	KindSplit            = "split"             // a member of a call's arguments holding part of a secret its neighbours complete
	KindKey              = "key"               // a value under a secret member name
	KindCustom           = "custom"            // an expression of Options.Extend
)

// Kinds lists the built-in detectors' kinds in the order they first run,
// then the kinds of whole values (split, key). A URL-encoded secret is
// named by the kind of the detector that found it once decoded.
func Kinds() []string {
	var out []string
	seen := map[string]bool{}
	for _, d := range builtinDetectors() {
		if d.kind != "" && !seen[d.kind] {
			seen[d.kind] = true
			out = append(out, d.kind)
		}
	}
	return append(out, KindSplit, KindKey)
}

// scan is what a detector knows beside the text it reads.
type scan struct {
	depth    int  // how many decodings deep the text is: 0 for the text as given
	awsKeyID bool // an AWS key id is in the text, or in the call's arguments the text is part of
	joined   bool // the text is members of a call joined (the split check): random-looking detectors are off
}

// maxDepth bounds decoding within decoding (base64 of URL-encoded text of
// hex…).
const maxDepth = 3

// span is one secret part a detector found: bytes [a, e) of the text it
// was given, and its kind when not the detector's own.
type span struct {
	a, e int
	kind string
}

type detector struct {
	kind  string
	re    *regexp.Regexp
	check func(secret string) bool // nil: every match
	// hints: text no match can lack one of, in lower case; the detector
	// runs only on text (lowered) holding one. None: it always runs.
	hints []string
	// spans, when set, finds the secret parts itself (re and check are
	// not used).
	spans func(r *Redactor, s string, sc *scan) []span
	// random: a detector of random-looking values, off in joined text.
	random bool
	// decodes: a detector that decodes and scans again, off at maxDepth.
	decodes bool
}

func (d *detector) mayMatch(lower string) bool {
	if len(d.hints) == 0 {
		return true
	}
	for _, h := range d.hints {
		if strings.Contains(lower, h) {
			return true
		}
	}
	return false
}

// runs reports whether the detector runs in sc.
func (d *detector) runs(sc *scan) bool {
	return !(d.random && sc.joined) && !(d.decodes && sc.depth >= maxDepth)
}

// find is the secret spans of s, in order and apart: the detector's own,
// or for an expression the first capture group taking part in each match,
// or the whole match; empty spans and those check refuses are left out.
func (d *detector) find(r *Redactor, s string, sc *scan) []span {
	if d.spans != nil {
		return d.spans(r, s, sc)
	}
	var out []span
	for _, m := range d.re.FindAllStringSubmatchIndex(s, -1) {
		a, e := m[0], m[1]
		for g := 1; 2*g+1 < len(m); g++ {
			if m[2*g] >= 0 {
				a, e = m[2*g], m[2*g+1]
				break
			}
		}
		if e <= a || (d.check != nil && !d.check(s[a:e])) {
			continue
		}
		out = append(out, span{a: a, e: e})
	}
	return out
}

func hasDigitAndLetter(s string) bool {
	return strings.ContainsAny(s, "0123456789") &&
		strings.ContainsAny(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
}

// isBasic reports whether s is base64 of "user:password".
func isBasic(s string) bool {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return false
	}
	i := strings.IndexByte(string(b), ':')
	return i > 0 && i < len(b)-1
}

// awsKeyIDRE is an AWS access key id, without its edges (awsKeyIDs checks
// them).
var awsKeyIDRE = regexp.MustCompile(`(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}`)

func isAlnum(c byte) bool { return charClass(c) < 3 }

// awsKeyIDs are the AWS key ids of s: not inside a longer run of letters
// and digits ("_" and "-" are edges, so a name like fetch_AKIA… holds one).
func awsKeyIDs(_ *Redactor, s string, _ *scan) []span {
	if !strings.Contains(s, "AKIA") && !strings.Contains(s, "ASIA") && !strings.Contains(s, "ABIA") && !strings.Contains(s, "ACCA") {
		return nil
	}
	var out []span
	for _, m := range awsKeyIDRE.FindAllStringIndex(s, -1) {
		if (m[0] == 0 || !isAlnum(s[m[0]-1])) && (m[1] == len(s) || !isAlnum(s[m[1]])) {
			out = append(out, span{a: m[0], e: m[1]})
		}
	}
	return out
}

// hasAWSKeyID reports whether s holds an AWS key id, or the token one was
// redacted to.
func hasAWSKeyID(s string) bool {
	return strings.Contains(s, tokenPrefix+KindAWSKeyID+":") || len(awsKeyIDs(nil, s, nil)) > 0
}

// edge begins an expression whose secret (its first group) may not follow
// a letter or a digit; "_", "-" and any other character may come before.
const edge = `(?:^|[^A-Za-z0-9])`

// regexDetectors are the built-in expressions, most particular first: a
// JWT after "Bearer " is named a JWT, an sk-ant- key is not taken for an
// OpenAI one.
var regexDetectors = []*detector{
	{kind: KindPrivateKey, hints: []string{"-----begin"}, re: regexp.MustCompile(`-----BEGIN[ A-Z0-9]*PRIVATE KEY-----(?s:.*?)(?:-----END[ A-Z0-9]*PRIVATE KEY-----|$)`)},
	{kind: KindJWT, hints: []string{"eyj"}, re: regexp.MustCompile(edge + `(eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*)`)},
	{kind: KindAnthropic, hints: []string{"sk-ant-"}, re: regexp.MustCompile(edge + `(sk-ant-[A-Za-z0-9_-]{20,})`)},
	{kind: KindOpenAI, hints: []string{"sk-"}, re: regexp.MustCompile(edge + `(sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,})`), check: hasDigitAndLetter},
	{kind: KindGitHub, hints: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}, re: regexp.MustCompile(edge + `(gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})`)},
	{kind: KindSlack, hints: []string{"xox"}, re: regexp.MustCompile(edge + `(xox[abposre]-[A-Za-z0-9-]{10,})`), check: hasDigitAndLetter},
	{kind: KindStripe, hints: []string{"_live_", "_test_"}, re: regexp.MustCompile(edge + `([sr]k_(?:live|test)_[A-Za-z0-9]{16,})`)},
	{kind: KindGoogle, hints: []string{"aiza"}, re: regexp.MustCompile(edge + `(AIza[0-9A-Za-z_-]{35})`)},
	{kind: KindGoogle, hints: []string{"ya29."}, re: regexp.MustCompile(edge + `(ya29\.[0-9A-Za-z_-]{20,})`)},
	{kind: KindAzure, hints: []string{"q~"}, re: regexp.MustCompile(`(?:^|[^A-Za-z0-9_~.-])([A-Za-z0-9_~.-]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34})(?:[^A-Za-z0-9_~.-]|$)`)},
	// An AWS secret after a name saying so, then one beside a key id (in
	// the text, or in the call), before the key id itself is redacted.
	{kind: KindAWSSecret, hints: []string{"aws"}, re: regexp.MustCompile(`(?i)aws[A-Za-z0-9_. -]{0,20}?secret[A-Za-z0-9_. -]{0,20}?["']?\s*[:=]\s*["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`)},
	{kind: KindAWSSecret, spans: awsBesideKeyID},
	{kind: KindAWSKeyID, hints: []string{"akia", "asia", "abia", "acca"}, spans: awsKeyIDs},
	{kind: KindConnectionString, hints: []string{"://"}, re: regexp.MustCompile(`\b[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s:/@?#]*:([^\s@/?#]+)@`)},
	{kind: KindBearer, hints: []string{"bearer"}, re: regexp.MustCompile(`(?i)\bbearer\s+([A-Za-z0-9._~+/-]{8,}=*)`), check: hasDigitAndLetter},
	{kind: KindBasic, hints: []string{"basic"}, re: regexp.MustCompile(`(?i)\bbasic\s+([A-Za-z0-9+/]{4,}={0,2})`), check: isBasic},
}

// afterCustom are the built-in detectors that run after Options.Extend's
// expressions: the pairs, then the random-looking values, then the
// decoders.
var afterCustom = []*detector{
	{kind: KindAWSSecret, spans: awsShaped, random: true},
	{kind: KindEntropy, spans: randomRuns, random: true},
	{kind: KindBase64, spans: base64Spans, decodes: true},
	{kind: KindHex, spans: hexSpans, decodes: true},
	{spans: urlSpans, decodes: true}, // no kind of its own: each span has the kind of what was found once decoded
}

// builtinDetectors are every built-in detector in the order they run
// (Options.Extend's expressions run after regexDetectors).
func builtinDetectors() []*detector {
	out := append([]*detector{}, regexDetectors...)
	out = append(out, pairs)
	return append(out, afterCustom...)
}
