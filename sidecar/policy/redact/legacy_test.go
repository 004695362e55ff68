package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// The redactor as it was before the provider names, the entropy detector,
// the decoders and the split check (commit 6d62857): its expressions, its
// key names and its streaming walk, kept here as the floor the benchmark
// measures the redactor against.

var legacyKeys = []string{
	"password", "passwd", "pwd", "passphrase", "secret", "client_secret", "clientSecret",
	"api_key", "apikey", "api-key", "x-api-key", "access_token", "accessToken", "refresh_token", "refreshToken",
	"id_token", "auth_token", "session_token", "token", "authorization", "proxy-authorization", "cookie",
	"set-cookie", "private_key", "privateKey", "secret_key", "secretKey", "aws_secret_access_key",
	"credentials",
}

var legacyDetectors = []*detector{
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
	{kind: KindPassword, hints: []string{"pass", "pwd", "secret", "token", "key", "credential"}, re: regexp.MustCompile(
		`(?i)(?:^|[^A-Za-z0-9_-])[A-Za-z0-9_.-]*?(?:password|passwd|pwd|passphrase|secret|token|api[_-]?key|private[_-]?key|secret[_-]?key|access[_-]?key|credentials?)["']?\s*[:=]\s*` +
			`(?:"([^"\s][^"]*)"|'([^'\s][^']*)'|([^\s"'&,;]+))`)},
}

// legacy is the old redactor: its detectors through the same passes, its
// keys compared in lower case, its walk.
type legacy struct {
	r    *Redactor
	keys map[string]bool
}

func newLegacy(salt []byte) *legacy {
	l := &legacy{r: &Redactor{salt: bytes.Clone(salt), detectors: legacyDetectors}, keys: map[string]bool{}}
	for _, k := range legacyKeys {
		l.keys[strings.ToLower(k)] = true
	}
	return l
}

func (l *legacy) JSON(doc []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var out bytes.Buffer
	if err := l.value(dec, &out, false); err != nil {
		return nil, fmt.Errorf("redact arguments: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("redact arguments: more after the JSON value")
	}
	return out.Bytes(), nil
}

func (l *legacy) value(dec *json.Decoder, out *bytes.Buffer, secret bool) error {
	if secret {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		s, err := secretOfJSON(bytes.TrimSpace(raw))
		if err != nil {
			return err
		}
		writeString(out, l.r.token(KindKey, s))
		return nil
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		end := byte(']')
		if t == '{' {
			end = '}'
		}
		out.WriteByte(byte(t))
		for i := 0; dec.More(); i++ {
			if i > 0 {
				out.WriteByte(',')
			}
			key := false
			if t == '{' {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				name, _ := kt.(string)
				writeString(out, l.r.Text(name))
				out.WriteByte(':')
				key = l.keys[strings.ToLower(name)]
			}
			if err := l.value(dec, out, key); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil {
			return err
		}
		out.WriteByte(end)
	case string:
		writeString(out, l.r.Text(t))
	case json.Number:
		out.WriteString(t.String())
	case bool:
		fmt.Fprint(out, t)
	case nil:
		out.WriteString("null")
	}
	return nil
}
