package approval

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
)

// The hub's default redaction holds what package redact finds: the AWS
// SDK's own member names, random-looking and encoded values, a member name
// that is a token.
func TestRedactSecretsFindsWhatRedactFinds(t *testing.T) {
	const (
		awsSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
		random    = "Xk9qLm2Pz8Rt4Vw7Yb3Nc6Hd1sF5gT0u"
		gh        = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
	)
	in := `{"secretAccessKey":"` + awsSecret + `","aws_secret":"x","note":"` + random + `","blob":"` +
		base64.StdEncoding.EncodeToString([]byte(gh)) + `","` + gh + `":1,"path":"a.txt","max_tokens":5}`
	out := string(RedactSecrets([]byte(in)))
	for _, secret := range []string{awsSecret, random, gh, base64.StdEncoding.EncodeToString([]byte(gh))} {
		if strings.Contains(out, secret) {
			t.Errorf("%q shown: %s", secret, out)
		}
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	if m["secretAccessKey"] != Redacted || m["aws_secret"] != Redacted || m["note"] != Redacted || m["blob"] != Redacted ||
		m["path"] != "a.txt" || m["max_tokens"] != json.Number("5") && m["max_tokens"] != float64(5) || len(m) != 7 {
		t.Fatalf("%s", out)
	}
}
