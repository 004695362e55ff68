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
	KindGoogle           = "google"            // AIza + 35
	KindAWSKeyID         = "aws-key-id"        // AKIA, ASIA, ABIA, ACCA + 16
	KindAWSSecret        = "aws-secret"        // 40 characters after an aws…secret… name
	KindConnectionString = "connection-string" // the password of scheme://user:password@host
	KindBearer           = "bearer"            // the token after "Bearer "
	KindBasic            = "basic"             // the credentials after "Basic " (base64 of user:password)
	KindPassword         = "password"          // the value of a password=…, secret: … pair
	KindKey              = "key"               // a value under a secret member name
	KindCustom           = "custom"            // an expression of Options.Extend
)

// Kinds lists the built-in detectors' kinds in the order they run.
func Kinds() []string {
	out := make([]string, 0, len(builtin)+1)
	for _, d := range builtin {
		out = append(out, d.kind)
	}
	return append(out, KindPassword)
}

// BuiltinKeys are the member names whose values are redacted whole
// (compared without regard to case).
var BuiltinKeys = []string{
	"password", "passwd", "pwd", "passphrase", "secret", "client_secret", "clientSecret",
	"api_key", "apikey", "api-key", "x-api-key", "access_token", "accessToken", "refresh_token", "refreshToken",
	"id_token", "auth_token", "session_token", "token", "authorization", "proxy-authorization", "cookie",
	"set-cookie", "private_key", "privateKey", "secret_key", "secretKey", "aws_secret_access_key",
	"credentials",
}

// builtinPairHints: one is in every name builtinPairNames match.
var builtinPairHints = []string{"pass", "pwd", "secret", "token", "key", "credential"}

// builtinPairNames end a name whose "=" or ":" value is a secret (the name
// may have anything of a name before: db_password, X-Api-Key).
var builtinPairNames = []string{
	"password", "passwd", "pwd", "passphrase", "secret", "token", "api[_-]?key", "private[_-]?key",
	"secret[_-]?key", "access[_-]?key", "credentials?",
}

type detector struct {
	kind  string
	re    *regexp.Regexp
	check func(secret string) bool // nil: every match
	// hints: text no match can lack one of, in lower case; the expression
	// runs only on text (lowered) holding one. None: it always runs.
	hints []string
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

// find is the secret spans of s: the first capture group taking part in
// each match, or the whole match; empty spans and those check refuses are
// left out.
func (d *detector) find(s string) [][2]int {
	var out [][2]int
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
		out = append(out, [2]int{a, e})
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

// builtin detectors, most particular first: a JWT after "Bearer " is named
// a JWT, an sk-ant- key is not taken for an OpenAI one.
var builtin = []*detector{
	{kind: KindPrivateKey, hints: []string{"-----begin"}, re: regexp.MustCompile(`-----BEGIN[ A-Z0-9]*PRIVATE KEY-----(?s:.*?)(?:-----END[ A-Z0-9]*PRIVATE KEY-----|$)`)},
	{kind: KindJWT, hints: []string{"eyj"}, re: regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*`)},
	{kind: KindAnthropic, hints: []string{"sk-ant-"}, re: regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_-]{20,}`)},
	{kind: KindOpenAI, hints: []string{"sk-"}, re: regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`), check: hasDigitAndLetter},
	{kind: KindGitHub, hints: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}, re: regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})`)},
	{kind: KindSlack, hints: []string{"xox"}, re: regexp.MustCompile(`\bxox[abposre]-[A-Za-z0-9-]{10,}`), check: hasDigitAndLetter},
	{kind: KindStripe, hints: []string{"_live_", "_test_"}, re: regexp.MustCompile(`\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}`)},
	{kind: KindGoogle, hints: []string{"aiza"}, re: regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`)},
	{kind: KindAWSKeyID, hints: []string{"akia", "asia", "abia", "acca"}, re: regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`)},
	{kind: KindAWSSecret, hints: []string{"aws"}, re: regexp.MustCompile(`(?i)aws[A-Za-z0-9_. -]{0,20}?secret[A-Za-z0-9_. -]{0,20}?["']?\s*[:=]\s*["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`)},
	{kind: KindConnectionString, hints: []string{"://"}, re: regexp.MustCompile(`\b[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s:/@?#]*:([^\s@/?#]+)@`)},
	{kind: KindBearer, hints: []string{"bearer"}, re: regexp.MustCompile(`(?i)\bbearer\s+([A-Za-z0-9._~+/-]{8,}=*)`), check: hasDigitAndLetter},
	{kind: KindBasic, hints: []string{"basic"}, re: regexp.MustCompile(`(?i)\bbasic\s+([A-Za-z0-9+/]{4,}={0,2})`), check: isBasic},
}

// pairDetector finds the value of name=value and name: value pairs whose
// name ends in one of names (RE2 fragments), quoted or not.
func pairDetector(names, hints []string) *detector {
	re := `(?i)(?:^|[^A-Za-z0-9_-])[A-Za-z0-9_.-]*?(?:` + strings.Join(names, "|") + `)["']?\s*[:=]\s*` +
		`(?:"([^"\s][^"]*)"|'([^'\s][^']*)'|([^\s"'&,;]+))`
	return &detector{kind: KindPassword, re: regexp.MustCompile(re), hints: hints}
}
