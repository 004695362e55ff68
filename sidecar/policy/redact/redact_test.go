package redact

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

var testSalt = bytes.Repeat([]byte{7}, SaltSize)

func newTest(t testing.TB, o Options) *Redactor {
	t.Helper()
	r, err := New(testSalt, o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func tok(kind, secret string) string { return "[REDACTED:" + kind + ":" + Tag(testSalt, secret) + "]" }

// Fake secrets of the right shapes (the AWS ones are AWS's documentation
// examples).
const (
	fakeOpenAI    = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXyZ4"
	fakeOpenAIOld = "sk-T3BlbkFJ0123456789abcdefghijklmnopqrstuvwxyzAB"
	fakeAnthropic = "sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe-AAAA"
	fakeGitHub    = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
	fakeGitHubPAT = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"
	fakeSlack     = "xoxb-1234567890-0987654321-AbCdEfGhIjKl"
	fakeStripe    = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"
	fakeGoogle    = "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"
	fakeAWSID     = "AKIAIOSFODNN7EXAMPLE"
	fakeAWSSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	fakeJWT       = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
	fakePEM       = "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\n-----END RSA PRIVATE KEY-----"
)

func TestDetectors(t *testing.T) {
	r := newTest(t, Options{})
	for _, tc := range []struct {
		name, in string
		kind     string // "" for a false positive the detectors must leave alone
		secret   string // the part replaced
	}{
		// private-key
		{"pem rsa", "key:\n" + fakePEM + "\nend", KindPrivateKey, fakePEM},
		{"pem pkcs8", "-----BEGIN PRIVATE KEY-----\nMIIEvQ\n-----END PRIVATE KEY-----", KindPrivateKey, "-----BEGIN PRIVATE KEY-----\nMIIEvQ\n-----END PRIVATE KEY-----"},
		{"pem openssh without END", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA", KindPrivateKey, "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA"},
		{"pem public key (false)", "-----BEGIN PUBLIC KEY-----\nMFkwEwYH\n-----END PUBLIC KEY-----", "", ""},
		{"pem certificate (false)", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----", "", ""},
		// jwt
		{"jwt", "token " + fakeJWT + " used", KindJWT, fakeJWT},
		{"jwt after Bearer is a jwt", "Authorization: Bearer " + fakeJWT, KindJWT, fakeJWT},
		{"jwt header alone (false)", "eyJhbGciOiJIUzI1NiJ9 is a header", "", ""},
		{"jwt-like dotted words (false)", "eyJ.eyJ.x", "", ""},
		// anthropic
		{"anthropic", "key=" + fakeAnthropic, KindAnthropic, fakeAnthropic},
		{"anthropic short (false)", "sk-ant-short", "", ""},
		// openai
		{"openai project", "use " + fakeOpenAI + " please", KindOpenAI, fakeOpenAI},
		{"openai legacy", fakeOpenAIOld, KindOpenAI, fakeOpenAIOld},
		{"openai short (false)", "pip install sk-learn", "", ""},
		{"openai no digits (false)", "sk-this-is-not-a-key-at-all-really", "", ""},
		{"openai inside a word (false)", "task-0123456789abcdefghijklmnop", "", ""},
		// github
		{"github classic", "git clone https://" + fakeGitHub + "@github.com/a/b", KindGitHub, fakeGitHub},
		{"github fine-grained", fakeGitHubPAT, KindGitHub, fakeGitHubPAT},
		{"github oauth", "gho_0123456789abcdefghijABCDEFGHIJ012345", KindGitHub, "gho_0123456789abcdefghijABCDEFGHIJ012345"},
		{"github short (false)", "ghp_short and gho_", "", ""},
		// slack
		{"slack bot", "SLACK=" + fakeSlack, KindSlack, fakeSlack},
		{"slack-like word (false)", "xoxo-hugs-and-kisses", "", ""},
		// stripe
		{"stripe live", "stripe " + fakeStripe, KindStripe, fakeStripe},
		{"stripe restricted test", "rk_test_0123456789abcdefXYZ", KindStripe, "rk_test_0123456789abcdefXYZ"},
		{"stripe short (false)", "sk_live_short", "", ""},
		{"stripe publishable (false)", "pk_live_4eC39HqLyjWDarjtT1zdp7dc", "", ""},
		// google
		{"google", "https://maps.example/api?key=" + fakeGoogle, KindGoogle, fakeGoogle},
		{"google short (false)", "AIzaSyShort", "", ""},
		// aws key id
		{"aws key id", "id " + fakeAWSID, KindAWSKeyID, fakeAWSID},
		{"aws session key id", "ASIAIOSFODNN7EXAMPLE", KindAWSKeyID, "ASIAIOSFODNN7EXAMPLE"},
		{"aws key id lower case (false)", "AKIAiosfodnn7example", "", ""},
		{"aws key id in a longer word (false)", "XAKIAIOSFODNN7EXAMPLEX", "", ""},
		// aws secret
		{"aws secret ini", "aws_secret_access_key = " + fakeAWSSecret + "\n", KindAWSSecret, fakeAWSSecret},
		{"aws secret prose", `AWS secret: "` + fakeAWSSecret + `"`, KindAWSSecret, fakeAWSSecret},
		{"40 characters without aws context (false)", "commit 0123456789abcdef0123456789abcdef01234567", "", ""},
		{"aws secret too short (false)", "aws_secret_access_key: short", KindPassword, "short"},
		// connection strings
		{"postgres", "postgres://app:s3cr3t@db.internal:5432/app", KindConnectionString, "s3cr3t"},
		{"redis no user", "redis://:hunter2@cache:6379/0", KindConnectionString, "hunter2"},
		{"mongodb+srv", "mongodb+srv://admin:Pa55w0rd!@cluster0.example.net/test", KindConnectionString, "Pa55w0rd!"},
		{"url with port (false)", "https://example.com:8080/path?q=1", "", ""},
		{"url with user only (false)", "ssh://git@github.com/a/b.git", "", ""},
		// bearer
		{"bearer", "Authorization: Bearer abc123DEF456ghi789", KindBearer, "abc123DEF456ghi789"},
		{"bearer lower case", "bearer x9y8z7w6v5u4", KindBearer, "x9y8z7w6v5u4"},
		{"bearer of news (false)", "the bearer of bad news", "", ""},
		{"bearer word without digits (false)", "Bearer information follows", "", ""},
		// basic
		{"basic", "Authorization: Basic dXNlcjpwYXNz", KindBasic, "dXNlcjpwYXNz"},
		{"basic idea (false)", "the basic idea is simple", "", ""},
		{"basic base64 without colon (false)", "Basic aGVsbG8=", "", ""},
		// password pairs
		{"password=", "login with password=hunter2 now", KindPassword, "hunter2"},
		{"db_password:", "db_password: correct-horse", KindPassword, "correct-horse"},
		{"secret quoted", `secret: "two words"`, KindPassword, "two words"},
		{"json inside text", `{"api_key": "abcd1234"}`, KindPassword, "abcd1234"},
		{"query string", "https://x.example/cb?client_secret=zz9&x=1", KindPassword, "zz9"},
		{"env line", "GITHUB_TOKEN=abcdef", KindPassword, "abcdef"},
		{"password reset (false)", "send a password reset link", "", ""},
		{"secretary (false)", "secretary: Jane", "", ""},
		{"passwords list (false)", "passwords = none", "", ""},
		{"empty value (false)", `password: ""`, "", ""},
		// nothing
		{"plain text (false)", "read the file /etc/hosts and count lines", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.in
			if tc.kind != "" {
				if !strings.Contains(tc.in, tc.secret) {
					t.Fatalf("bad case: %q not in %q", tc.secret, tc.in)
				}
				want = strings.Replace(tc.in, tc.secret, tok(tc.kind, tc.secret), 1)
			}
			if got := r.Text(tc.in); got != want {
				t.Fatalf("Text(%q)\n got  %q\n want %q", tc.in, got, want)
			}
			if got := r.Text(want); got != want {
				t.Fatalf("not idempotent: %q -> %q", want, got)
			}
		})
	}
}

func TestEveryKindHasCases(t *testing.T) {
	// The tables of TestDetectors, TestNewDetectors and TestJSONSplits
	// name every built-in kind; this keeps it so when a detector is added.
	src := strings.Join(Kinds(), " ")
	for _, k := range []string{KindPrivateKey, KindJWT, KindAnthropic, KindOpenAI, KindGitHub, KindSlack, KindStripe,
		KindGoogle, KindAzure, KindAWSKeyID, KindAWSSecret, KindConnectionString, KindBearer, KindBasic, KindPassword,
		KindEntropy, KindBase64, KindHex, KindSplit, KindKey} {
		if !strings.Contains(src, k) {
			t.Errorf("kind %s not built in", k)
		}
	}
	if len(Kinds()) != 20 {
		t.Errorf("Kinds() = %v: add the new kind to TestDetectors and here", Kinds())
	}
}

func TestJSON(t *testing.T) {
	r := newTest(t, Options{ExtendKeys: []string{"X-Internal", "PIN"}})
	in := `{"path":"/tmp/a.txt","content":"key ` + fakeOpenAI + ` here","Password":"hunter2","nested":{"list":[1,2.50,"` + fakeAWSID + `",true,null],"x-internal":{"a":1},"token":""},"api_key":null,"pin":1234,"html":"<b>&</b>"}`
	orig := []byte(in)
	out, err := r.JSON(orig)
	if err != nil {
		t.Fatal(err)
	}
	if string(orig) != in {
		t.Fatal("input modified")
	}
	want := `{"path":"/tmp/a.txt","content":"key ` + tok(KindOpenAI, fakeOpenAI) + ` here","Password":"` + tok(KindKey, "hunter2") +
		`","nested":{"list":[1,2.50,"` + tok(KindAWSKeyID, fakeAWSID) + `",true,null],"x-internal":"` + tok(KindKey, `{"a":1}`) +
		`","token":""},"api_key":null,"pin":"` + tok(KindKey, "1234") + `","html":"<b>&</b>"}`
	if string(out) != want {
		t.Fatalf("JSON\n got  %s\n want %s", out, want)
	}
	again, err := r.JSON(out)
	if err != nil || !bytes.Equal(again, out) {
		t.Fatalf("not idempotent:\n %s\n %s (%v)", out, again, err)
	}
	// The auditor's check.
	if !VerifyJSON(testSalt, []byte(`"hunter2"`), tok(KindKey, "hunter2")) ||
		!VerifyJSON(testSalt, []byte(`{ "a" : 1 }`), tok(KindKey, `{"a":1}`)) ||
		!VerifyJSON(testSalt, []byte(`1234`), tok(KindKey, "1234")) ||
		!Verify(testSalt, fakeOpenAI, tok(KindOpenAI, fakeOpenAI)) {
		t.Fatal("Verify refused the original")
	}
	if Verify(testSalt, "hunter3", tok(KindKey, "hunter2")) || Verify(bytes.Repeat([]byte{8}, 32), "hunter2", tok(KindKey, "hunter2")) ||
		Verify(testSalt, "hunter2", "hunter2") {
		t.Fatal("Verify accepted another value, salt or a non-token")
	}
}

func TestJSONRefusesNonJSON(t *testing.T) {
	r := newTest(t, Options{})
	for _, s := range []string{``, `{`, `{"a":1}{}`, `{"a":}`, `[1,]`, `{"a":1} x`} {
		if _, err := r.JSON([]byte(s)); err == nil {
			t.Errorf("JSON(%q) accepted", s)
		}
	}
	out, err := r.JSON([]byte(`{"` + fakeGitHub + `":{"password=x":1}}`))
	if err != nil || string(out) != `{"`+tok(KindGitHub, fakeGitHub)+`":{"`+tok(KindPassword, "password=x")+`":1}}` {
		t.Fatalf("member names: %s %v", out, err)
	}
	out, err = r.JSON([]byte(" \"" + fakeGitHub + "\" \n"))
	if err != nil || string(out) != `"`+tok(KindGitHub, fakeGitHub)+`"` {
		t.Fatalf("top-level text: %s %v", out, err)
	}
}

func TestOptions(t *testing.T) {
	r := newTest(t, Options{Extend: []string{`\bACME-[0-9]{6}\b`, `internal-id=(\w+)`}, ExtendKeys: []string{"client_ref"}, ReplaceBuiltin: true})
	for _, tc := range []struct{ in, want string }{
		{"ticket ACME-123456 done", "ticket " + tok(KindCustom, "ACME-123456") + " done"},
		{"internal-id=abc", "internal-id=" + tok(KindCustom, "abc")},
		{"client_ref=xyz", "client_ref=" + tok(KindPassword, "xyz")},
		{fakeOpenAI + " password=x", fakeOpenAI + " password=x"}, // built-ins replaced
	} {
		if got := r.Text(tc.in); got != tc.want {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if !r.IsKey("CLIENT_REF") || r.IsKey("password") {
		t.Fatal("IsKey with replaced built-ins")
	}
	r2 := newTest(t, Options{Extend: []string{`x*`}}) // matches empty: ignored, not looped on
	if got := r2.Text("abc"); got != "abc" {
		t.Fatalf("empty matches: %q", got)
	}
	if _, err := New(testSalt, Options{Extend: []string{`(?<=a)b`}}); err == nil || !strings.Contains(err.Error(), "extend[0]") {
		t.Fatalf("bad RE2: %v", err)
	}
	if _, err := New(testSalt[:16], Options{}); err == nil {
		t.Fatal("short salt accepted")
	}
	if _, err := New(testSalt, Options{ExtendKeys: []string{""}}); err == nil {
		t.Fatal("empty key accepted")
	}
	if len(NewSalt()) != SaltSize || bytes.Equal(NewSalt(), NewSalt()) {
		t.Fatal("NewSalt")
	}
	s := r.Salt()
	s[0] ^= 1
	if bytes.Equal(s, r.Salt()) {
		t.Fatal("Salt shares memory")
	}
}

func TestAlreadyRedactedIsKept(t *testing.T) {
	r := newTest(t, Options{})
	for _, s := range []string{
		"password=" + tok(KindPassword, "x"),
		"Bearer " + tok(KindJWT, "y"),
		tok(KindOpenAI, "z") + tok(KindOpenAI, "z"),
		"[REDACTED:key:0123abcd]",
	} {
		if got := r.Text(s); got != s {
			t.Errorf("Text(%q) = %q", s, got)
		}
	}
	out, err := r.JSON([]byte(`{"password":"[REDACTED:key:0123abcd]"}`))
	if err != nil || string(out) != `{"password":"[REDACTED:key:0123abcd]"}` {
		t.Fatalf("%s %v", out, err)
	}
	if k, tg, ok := ParseToken("[REDACTED:aws-key-id:0123abcd]"); !ok || k != "aws-key-id" || tg != "0123abcd" {
		t.Fatal("ParseToken")
	}
	if _, _, ok := ParseToken("[REDACTED:aws-key-id:0123abcd] "); ok {
		t.Fatal("ParseToken took trailing text")
	}
}

// stringsOf collects every string value and member name of a JSON value.
func stringsOf(v any, under string, r *Redactor, out *[]string) {
	switch x := v.(type) {
	case string:
		*out = append(*out, x)
	case []any:
		for _, e := range x {
			stringsOf(e, "", r, out)
		}
	case map[string]any:
		for k, e := range x {
			*out = append(*out, k)
			stringsOf(e, k, r, out)
		}
	}
}

func FuzzJSON(f *testing.F) {
	for _, s := range []string{
		`{"content":"` + fakeOpenAI + `","password":"x"}`,
		`["Bearer abc123DEF456", "postgres://u:p@h/db", {"token": {"a": [1]}}]`,
		`{"a":"-----BEGIN PRIVATE KEY-----\nxyz"}`,
		`"password=[REDACTED:password:00000000]"`,
		`{"k":"` + fakeAWSID + fakeGitHub + `sk-ant-` + fakeStripe + `"}`,
		`{"x":"aws secret = ` + fakeAWSSecret + `","y":1e400}`,
		`[]`, `null`, `"\u2028<>&\ud800"`,
	} {
		f.Add([]byte(s))
	}
	r := newTest(f, Options{ExtendKeys: []string{"client_ref"}})
	f.Fuzz(func(t *testing.T, doc []byte) {
		if !json.Valid(doc) {
			if _, err := r.JSON(doc); err == nil {
				t.Fatalf("JSON accepted invalid %q", doc)
			}
			return
		}
		orig := bytes.Clone(doc)
		out, err := r.JSON(doc)
		if err != nil {
			t.Fatalf("JSON(%q): %v", doc, err)
		}
		if !bytes.Equal(doc, orig) {
			t.Fatal("input modified")
		}
		if !json.Valid(out) {
			t.Fatalf("output not JSON: %q", out)
		}
		var v any
		dec := json.NewDecoder(bytes.NewReader(out))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		var ss []string
		stringsOf(v, "", r, &ss)
		for _, s := range ss {
			if found := r.Find(s); len(found) > 0 {
				t.Fatalf("output string %q still holds %+v", s, found)
			}
		}
		again, err := r.JSON(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("not idempotent:\n in    %q\n once  %q\n twice %q (%v)", doc, out, again, err)
		}
	})
}

func FuzzText(f *testing.F) {
	for _, s := range []string{"password=hunter2", "Bearer " + fakeJWT, fakePEM, "x" + fakeAnthropic + fakeOpenAI} {
		f.Add(s)
	}
	r := newTest(f, Options{Extend: []string{`id-[0-9]+`}})
	f.Fuzz(func(t *testing.T, s string) {
		checkGaps(t, s)
		out := r.Text(s)
		if found := r.Find(out); len(found) > 0 {
			t.Fatalf("Text(%q) = %q still holds %+v", s, out, found)
		}
		if again := r.Text(out); again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, out, again)
		}
	})
}

func BenchmarkJSON(b *testing.B) {
	r := newTest(b, Options{})
	doc := []byte(`{"path":"/srv/data/report.txt","content":"` + strings.Repeat("lorem ipsum dolor sit amet ", 200) + `","options":{"overwrite":true,"mode":420}}`)
	for b.Loop() {
		if _, err := r.JSON(doc); err != nil {
			b.Fatal(err)
		}
	}
}

// fragments are pieces of secrets, their contexts and tokens; FuzzMixed
// strings them together so detectors meet, overlap and follow tokens.
var fragments = []string{
	fakeOpenAI, fakeAnthropic, fakeGitHub, fakeSlack, fakeStripe, fakeGoogle, fakeAWSID, fakeAWSSecret, fakeJWT, fakePEM,
	"password=", "secret: ", `"token": "`, `"`, "'", "Bearer ", "Basic ", "dXNlcjpwYXNz", "postgres://u:", "@h/db", "://",
	"AKIA", "IOSFODNN7EXAMPLE", "sk-", "ant-", "ghp_", "aws_secret_access_key=", "-----BEGIN PRIVATE KEY-----",
	"-----END PRIVATE KEY-----", "[REDACTED:", "key:0123abcd]", "[REDACTED:key:0123abcd]", " ", "\n", "x", "0", ":", "=", "&", ".",
	// the detectors of names, random-looking values and encodings
	fakeAzure, fakeYa29, fakeRandom32, fakeAWSRandom, "cGFzc3dvcmQ9aHVudGVyMg==", "Z2hwXzAxMjM0NTY3ODlh", "70617373776f7264",
	"%3D", "%41KIA", "%25", "Authorization: ", "Cookie: ", "sig=", "AccountKey=", "secretAccessKey", "pa\u017f\u017fword",
	"-----BEGIN CERTIFICATE-----", "-----END CERTIFICATE-----", "/", "_", "-", "sha256-", ";base64,", "Token ", "\"", "\\",
}

func FuzzMixed(f *testing.F) {
	f.Add([]byte{10, 0, 15, 8, 30})
	f.Add([]byte{25, 26, 27, 28, 29, 30})
	f.Add([]byte{19, 20, 32, 33, 4})
	r := newTest(f, Options{Extend: []string{`IOSF[A-Z0-9]+`}, ExtendKeys: []string{"u"}})
	f.Fuzz(func(t *testing.T, picks []byte) {
		var b strings.Builder
		for _, p := range picks {
			b.WriteString(fragments[int(p)%len(fragments)])
		}
		s := b.String()
		out := r.Text(s)
		if found := r.Find(out); len(found) > 0 {
			t.Fatalf("Text(%q) = %q still holds %+v", s, out, found)
		}
		if again := r.Text(out); again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, out, again)
		}
		doc, _ := json.Marshal(map[string]any{"a": s, "password": s, "l": []string{s}})
		once, err := r.JSON(doc)
		if err != nil {
			t.Fatal(err)
		}
		twice, err := r.JSON(once)
		if err != nil || !bytes.Equal(once, twice) {
			t.Fatalf("JSON not idempotent: %s -> %s", once, twice)
		}
		// Each fragment a member of its own: the split check's joins.
		var members []string
		for _, p := range picks {
			members = append(members, fragments[int(p)%len(fragments)])
		}
		doc, _ = json.Marshal(members)
		once, err = r.JSON(doc)
		if err != nil {
			t.Fatal(err)
		}
		twice, err = r.JSON(once)
		if err != nil || !bytes.Equal(once, twice) {
			t.Fatalf("JSON of members not idempotent:\n in    %s\n once  %s\n twice %s", doc, once, twice)
		}
		var shown []string
		if err := json.Unmarshal(once, &shown); err != nil || len(shown) != len(members) {
			t.Fatalf("%s: %v", once, err)
		}
		for _, m := range shown {
			if f := r.Find(m); len(f) > 0 {
				t.Fatalf("member %q of %s still holds %+v", m, once, f)
			}
		}
	})
}

// checkGaps holds gaps to tokenRE: the ranges between its matches.
func checkGaps(t *testing.T, s string) {
	t.Helper()
	var want [][2]int
	at := 0
	for _, m := range tokenRE.FindAllStringIndex(s, -1) {
		if m[0] > at {
			want = append(want, [2]int{at, m[0]})
		}
		at = m[1]
	}
	if at < len(s) {
		want = append(want, [2]int{at, len(s)})
	}
	if got := gaps(s); !reflect.DeepEqual(got, want) {
		t.Fatalf("gaps(%q) = %v, tokenRE says %v", s, got, want)
	}
}

func TestGaps(t *testing.T) {
	for _, s := range []string{"", "x", "[REDACTED:key:0123abcd]", "a[REDACTED:key:0123abcd]b[REDACTED:k-1:ffffffff]",
		"[REDACTED:[REDACTED:key:0123abcd]", "[REDACTED:key:0123abcd", "[REDACTED::0123abcd]", "[REDACTED:KEY:0123abcd]",
		"[REDACTED:" + strings.Repeat("a", 32) + ":0123abcd]", "[REDACTED:" + strings.Repeat("a", 33) + ":0123abcd]",
		"[REDACTED:key:0123abcg]", "[REDACTED:key:0123abcd]]", "[REDACTED:"} {
		checkGaps(t, s)
	}
}

func TestNonASCIIKeyFolds(t *testing.T) {
	r := newTest(t, Options{ExtendKeys: []string{"clé"}})
	if got := r.Text("CLÉ=abc"); got != "CLÉ="+tok(KindPassword, "abc") {
		t.Fatalf("got %q", got)
	}
}

func BenchmarkTextMiB(b *testing.B) {
	r := newTest(b, Options{})
	s := strings.Repeat("The quick brown fox: jumps over the lazy dog; see https://example.com/a?b=c.\n", 1<<20/76)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		r.Text(s)
	}
}

// extend and extendKeys beside the built-in detectors: each redacts what it
// names and leaves alike-looking text alone.
func TestOptionsBesideBuiltins(t *testing.T) {
	r := newTest(t, Options{Extend: []string{`\bACME-[0-9]{6}\b`}, ExtendKeys: []string{"client_secret", "X-Team"}})
	for _, tc := range []struct{ name, in, want string }{
		{"extend", "ticket ACME-123456", "ticket " + tok(KindCustom, "ACME-123456")},
		{"extend, one digit short (false)", "ticket ACME-12345", "ticket ACME-12345"},
		{"extend, inside a longer word (false)", "ticket ACME-1234567", "ticket ACME-1234567"},
		{"extendKeys pair", "client_secret=zz9top", "client_secret=" + tok(KindPassword, "zz9top")},
		{"extendKeys folds case", "x-team: blue", "x-team: " + tok(KindPassword, "blue")},
		{"extendKeys as a part of another key (false)", "client_secretary=Jane", "client_secretary=Jane"},
		{"extendKeys word without a value (false)", "the client_secret is rotated", "the client_secret is rotated"},
		{"built-ins still on", "key " + fakeOpenAI, "key " + tok(KindOpenAI, fakeOpenAI)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := r.Text(tc.in); got != tc.want {
				t.Fatalf("Text(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
	out, err := r.JSON([]byte(`{"X-TEAM":"blue","client_secret":{"v":1},"team":"red"}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"X-TEAM":"` + tok(KindKey, "blue") + `","client_secret":"` + tok(KindKey, `{"v":1}`) + `","team":"red"}`; string(out) != want {
		t.Errorf("JSON = %s\nwant %s", out, want)
	}
}
