package redact

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// FoldName is the form in which member names are compared: every rune
// folded (to lower case of its upper case, so that "ſ" and "s", "K"
// (Kelvin) and "k" are one, as a case-insensitive decoder takes them), and
// every rune that is not a letter or a digit dropped. Separators ("_", "-",
// ".", spaces, ":"), invisible format characters and camel-case boundaries
// all collapse: "secretAccessKey", "SECRET_ACCESS_KEY" and
// "secret-access.key" are all "secretaccesskey".
func FoldName(name string) string {
	if ascii := foldASCII(name); ascii != "" || name == "" {
		return ascii
	}
	var b strings.Builder
	b.Grow(len(name))
	for _, c := range name {
		if c == utf8.RuneError {
			continue
		}
		// Folded first: a mark such as U+0345 folds to a letter (ι), and a
		// case-insensitive reader takes it for one.
		if f := foldRune(c); unicode.IsLetter(f) || unicode.IsDigit(f) {
			b.WriteRune(f)
		}
	}
	return b.String()
}

// foldASCII is FoldName of an ASCII name that holds a letter or a digit,
// and "" for any other name.
func foldASCII(name string) string {
	var buf [64]byte
	b := buf[:0]
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= utf8.RuneSelf:
			return ""
		case 'A' <= c && c <= 'Z':
			b = append(b, c+'a'-'A')
		case 'a' <= c && c <= 'z' || '0' <= c && c <= '9':
			b = append(b, c)
		}
	}
	return string(b)
}

// foldRune is the one rune every rune of c's case-folding orbit maps to.
func foldRune(c rune) rune {
	if c < utf8.RuneSelf {
		if 'A' <= c && c <= 'Z' {
			return c + 'a' - 'A'
		}
		return c
	}
	return unicode.ToLower(unicode.ToUpper(c))
}

// secretSuffixes: a folded name (past its carrier words) that ends in one
// of these is a secret key. Each is a word whose meaning is "a secret" as
// the last part of a name: a db_password, an awsSecretAccessKey, a
// GITHUB_TOKEN.
var secretSuffixes = []string{
	// passwords
	"password", "passwd", "passphrase", "passcode", "pwd", "pass", "passwordhash", "otp",
	// the common spellings
	"secret", "token", "credential", "credentials", "creds", "apikey", "authorization", "auth", "cookie", "cookies",
	// keys by what they are
	"privatekey", "privatekeyid", "secretkey", "accesskey", "accountkey", "sharedaccesskey", "sharedaccesssignature",
	"sessionkey", "masterkey", "signingkey", "encryptionkey", "subscriptionkey", "hmackey", "appkey",
}

// secretExact are folded names that are secret keys only as the whole
// name: as a suffix they end too many harmless words (config, ...), or
// "signature" names a harmless value elsewhere while a presigned URL's
// signature lets anyone holding the URL in.
var secretExact = []string{"sig", "pw", "xamzsignature", "xgoogsignature"}

// notSecretEndings are words that end in a secret suffix but say
// something else: a name ending in one is not a secret key.
var notSecretEndings = []string{"bypass", "compass", "encompass", "surpass", "trespass", "overpass", "underpass", "oauth"}

// carriers are words a name may end in after its secret word without
// changing what it holds: secretValue, password_b64, token2, apiKeyNew.
var carriers = []string{
	"value", "val", "string", "str", "text", "txt", "data", "raw", "plain", "plaintext", "base64", "b64", "hex",
	"encoded", "bytes", "binary", "bin", "json", "pem", "der", "new", "old", "current", "prev", "previous", "next",
	"v",
}

// userEndings mark an object that names a user: beside one, the short
// names of userPartners are secret keys too ({"user": "bob", "pin": "1234"}).
var userEndings = []string{"user", "username", "userid", "login", "email", "principal"}

// userPartners are secret keys in an object that names a user.
var userPartners = []string{"pin", "key", "pw", "pword"}

// stripCarriers drops carrier words and digits from the end of a folded
// name, keeping at least one rune.
func stripCarriers(n string) string {
	for range 4 {
		m := n
		for _, c := range carriers {
			if len(m) > len(c) && strings.HasSuffix(m, c) {
				m = m[:len(m)-len(c)]
				break
			}
		}
		if m == n {
			m = strings.TrimRightFunc(n, unicode.IsDigit)
		}
		if m == "" || m == n {
			break
		}
		n = m
	}
	return n
}

// secretName reports whether the folded name n is a built-in secret key.
func secretName(n string) bool {
	n = stripCarriers(n)
	for _, e := range secretExact {
		if n == e {
			return true
		}
	}
	for _, e := range notSecretEndings {
		if strings.HasSuffix(n, e) {
			return false
		}
	}
	for _, s := range secretSuffixes {
		if strings.HasSuffix(n, s) {
			return true
		}
	}
	return false
}

// IsSecretName reports whether values under a member or pair name are
// secrets by the built-in rule (see the package doc, "Secret names").
func IsSecretName(name string) bool { return secretName(FoldName(name)) }

// namesUser reports whether the folded name n names a user.
func namesUser(n string) bool {
	n = stripCarriers(n)
	for _, e := range userEndings {
		if strings.HasSuffix(n, e) {
			return true
		}
	}
	return false
}

// isUserPartner reports whether the folded name n is secret beside a
// member naming a user.
func isUserPartner(n string) bool {
	n = stripCarriers(n)
	for _, e := range userPartners {
		if n == e {
			return true
		}
	}
	return false
}
