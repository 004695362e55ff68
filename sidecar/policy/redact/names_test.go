package redact

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// secretNames are member names whose values are secrets: the providers'
// own spellings, then the common ones, in the forms clients and SDKs
// write them.
var secretNames = []string{
	// AWS (SDK members, CLI and environment names, config files)
	"secretAccessKey", "SecretAccessKey", "aws_secret_access_key", "AWS_SECRET_ACCESS_KEY", "AWS_SECRET", "aws_secret",
	"sessionToken", "SessionToken", "aws_session_token", "AWS_SESSION_TOKEN", "awsSecretKey", "AWS.SECRET.KEY",
	// Azure
	"clientSecret", "ClientSecret", "AZURE_CLIENT_SECRET", "AccountKey", "accountKey", "SharedAccessKey",
	"SharedAccessSignature", "sharedAccessKeyValue", "primaryKeyValue.secret", "sig", "Ocp-Apim-Subscription-Key",
	"X-Amz-Security-Token", "X-Amz-Signature", "X-Goog-Signature",
	"subscriptionKey",
	// GCP
	"private_key", "private_key_id", "privateKey", "client_secret", "GOOGLE_API_KEY",
	// common
	"password", "Password", "PASSWORD", "passwd", "pwd", "db_password", "dbPass", "DB_PASS", "passphrase", "pw",
	"secret", "webhookSecret", "token", "accessToken", "access_token", "refresh_token", "id_token", "GITHUB_TOKEN",
	"authToken", "x-auth-token", "bearerToken", "apiKey", "api_key", "api-key", "X-Api-Key", "APIKEY", "apikey",
	"credential", "credentials", "Credentials", "creds", "authorization", "Authorization", "proxy-authorization",
	"auth", "basic_auth", "cookie", "Cookie", "set-cookie", "cookies", "otp", "totp", "passcode",
	"encryptionKey", "signingKey", "hmacKey", "masterKey", "sessionKey", "appKey", "passwordHash",
	// separators, case and folding that a case-insensitive reader ignores
	"pass word", "pass-word", "pass.word", "passWord", "PaSsWoRd", "pa\u017f\u017fword", "API\u212aEY", "pass\u200bword",
	"to_ken", "Secret Access Key",
	// carriers after the secret word
	"secretValue", "password_b64", "tokenString", "token2", "apiKeyV2", "password_new", "SecretString", "clientSecretText",
}

// harmlessNames are names an auditor needs to read the value of, though
// they hold a secret word.
var harmlessNames = []string{
	"tokenCount", "max_tokens", "maxTokens", "token_type", "tokenType", "tokenizer", "tokenLimit", "token_url",
	"tokens", "total_tokens", "secretary", "secretName", "secret_arn", "secretRef", "secrets", "passwordPolicy",
	"password_reset_url", "passwordless", "passwords", "passport", "passage", "author", "oauth", "oauth2",
	"authType", "auth_method", "authenticated", "bypass", "compass", "publicKey", "public_key", "keyId", "key_id",
	"accessKeyId", "AWS_ACCESS_KEY_ID", "key", "primaryKey", "sortKey", "idempotencyKey", "cookieName", "cookie_domain",
	"signature", "config", "path", "content", "value", "name", "description", "user", "username", "email", "",
	"_", "---", "cwd", "sigma", "pin", "code",
}

func TestSecretNames(t *testing.T) {
	r := newTest(t, Options{})
	for _, n := range secretNames {
		if !IsSecretName(n) || !r.IsKey(n) {
			t.Errorf("%q (%q) is not taken for a secret name", n, FoldName(n))
		}
	}
	for _, n := range harmlessNames {
		if IsSecretName(n) || r.IsKey(n) {
			t.Errorf("%q (%q) is taken for a secret name", n, FoldName(n))
		}
	}
	// A token is never a key, whatever its kind says.
	for _, n := range []string{"[REDACTED:password:12345678]", "[REDACTED:key:00000000]"} {
		if r.IsKey(n) {
			t.Errorf("token %q is a key", n)
		}
	}
}

func TestFoldName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"secretAccessKey", "secretaccesskey"},
		{"SECRET_ACCESS_KEY", "secretaccesskey"},
		{"secret-access.key value", "secretaccesskeyvalue"},
		{"pa\u017f\u017fword", "password"}, // long s folds to s
		{"\u212a", "k"},                    // Kelvin sign folds to k
		{"ΣΊΣΥΦΟΣ", "σίσυφοσ"},
		{"a\u200bb\u202ec", "abc"}, // format characters are not letters
		{"x\xffy", "xy"},           // nor is a byte that is not UTF-8
		{"ß", "ß"},
		{"", ""},
	} {
		if got := FoldName(tc.in); got != tc.want {
			t.Errorf("FoldName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// variants are spellings of name that a case-insensitive reader (Go's
// encoding/json, mark3labs/mcp-go) takes for it: each rune moved along its
// case-folding orbit by shift steps.
func variant(name string, shift int) string {
	var b strings.Builder
	for _, c := range name {
		for range shift {
			c = unicode.SimpleFold(c)
		}
		b.WriteRune(c)
	}
	return b.String()
}

func FuzzFoldName(f *testing.F) {
	for _, n := range append(append([]string{}, secretNames...), harmlessNames...) {
		f.Add(n, 1)
	}
	r := newTest(f, Options{ExtendKeys: []string{"client_ref", "Kunde"}})
	f.Fuzz(func(t *testing.T, name string, shift int) {
		n := FoldName(name)
		if !utf8.ValidString(n) {
			t.Fatalf("FoldName(%q) = %q: not UTF-8", name, n)
		}
		for _, c := range n {
			if !unicode.IsLetter(c) && !unicode.IsDigit(c) {
				t.Fatalf("FoldName(%q) = %q keeps %q", name, n, c)
			}
		}
		if FoldName(n) != n {
			t.Fatalf("FoldName not idempotent: %q -> %q -> %q", name, n, FoldName(n))
		}
		v := variant(name, shift&7)
		if FoldName(v) != n {
			t.Fatalf("FoldName(%q) = %q but its case variant %q folds to %q", name, n, v, FoldName(v))
		}
		if r.IsKey(name) != r.IsKey(v) && !wholeTokenRE.MatchString(name) && !wholeTokenRE.MatchString(v) {
			t.Fatalf("IsKey(%q) = %v but IsKey(%q) = %v", name, r.IsKey(name), v, r.IsKey(v))
		}
	})
}

func TestExtendKeysFold(t *testing.T) {
	r := newTest(t, Options{ExtendKeys: []string{"client_ref", "X-Team"}, ReplaceBuiltin: true})
	for n, want := range map[string]bool{
		"client_ref": true, "ClientRef": true, "CLIENT-REF": true, "my_client_ref": true, "clientRefValue": true,
		"client_refs": false, "client_secretary": false, "x_team": true, "XTEAM": true, "x-teams": false, "password": false,
	} {
		if r.IsKey(n) != want {
			t.Errorf("IsKey(%q) = %v, want %v", n, !want, want)
		}
	}
	if _, err := New(testSalt, Options{ExtendKeys: []string{"--"}}); err == nil {
		t.Fatal("an extend key with no letter or digit accepted")
	}
}
