package redact

import (
	"bufio"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// Fake secrets of the shapes the new detectors find (random, made for these
// tests).
const (
	fakeAzure     = "abc8Q~Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeAb"
	fakeYa29      = "ya29.a0AfH6SMBxExampleTokenValue1234567890"
	fakeAWSRandom = "Xk9qLm2Pz8Rt4Vw7Yb3Nc6Hd/J1sF5gT0uE+aW2Q" // 40 characters, random
	fakeRandom32  = "Xk9qLm2Pz8Rt4Vw7Yb3Nc6Hd1sF5gT0u"
	fakeRandom64  = "q3Vf9ZkT2mLx8RbN4wYc7HsD1jGp6EaU0oIiKtMzQvWnXyB5lCrSdFgHeJuAhOPa"
)

// part is one secret a case expects replaced: its kind and its text.
type part struct{ kind, secret string }

// want is in with each part's secret replaced by its token, in order.
func want(t *testing.T, in string, parts ...part) string {
	t.Helper()
	out, at := "", 0
	for _, p := range parts {
		i := strings.Index(in[at:], p.secret)
		if i < 0 {
			t.Fatalf("bad case: %q not in %q after %d", p.secret, in, at)
		}
		out += in[at:at+i] + tok(p.kind, p.secret)
		at += i + len(p.secret)
	}
	return out + in[at:]
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func TestNewDetectors(t *testing.T) {
	r := newTest(t, Options{})
	for _, tc := range []struct {
		name, in string
		parts    []part
	}{
		// providers
		{"azure client secret", "client secret " + fakeAzure + " end", []part{{KindAzure, fakeAzure}}},
		{"google oauth token", "token " + fakeYa29, []part{{KindGoogle, fakeYa29}}},
		{"aws secret beside a key id", "id " + fakeAWSID + " key " + fakeAWSSecret,
			[]part{{KindAWSKeyID, fakeAWSID}, {KindAWSSecret, fakeAWSSecret}}},
		{"aws secret alone, random", "key " + fakeAWSRandom, []part{{KindAWSSecret, fakeAWSRandom}}},
		// The documentation's example secret ends in EXAMPLEKEY: words, not
		// random; it is found beside a key id or under an aws…secret name.
		{"aws documentation secret alone (false)", "key " + fakeAWSSecret, nil},
		{"azure storage connection string",
			"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Zm9vYmFyYmF6cXV4cXV1eA==;EndpointSuffix=core.windows.net",
			[]part{{KindPassword, "Zm9vYmFyYmF6cXV4cXV1eA=="}}},
		{"azure service bus connection string",
			"Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=Zm9vYmFy+YmF6/cXV4=",
			[]part{{KindPassword, "Zm9vYmFy+YmF6/cXV4="}}},
		{"azure SAS in a URL", "https://acct.blob.core.windows.net/c/b.txt?sv=2022-11-02&sp=r&sig=AbCdEf%2BGh%3D",
			[]part{{KindPassword, "AbCdEf%2BGh%3D"}}},
		{"azure SharedAccessSignature", "SharedAccessSignature=sv=2022&sig=abc",
			[]part{{KindPassword, "sv=2022"}, {KindPassword, "abc"}}},
		{"gcp service account JSON as text",
			`{"type": "service_account", "private_key_id": "1a2b3c4d5e6f", "private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQ\n-----END PRIVATE KEY-----\n", "client_email": "x@p.iam.gserviceaccount.com"}`,
			[]part{{KindPassword, "1a2b3c4d5e6f"}, {KindPrivateKey, `-----BEGIN PRIVATE KEY-----\nMIIEvQ\n-----END PRIVATE KEY-----`}}},
		{"presigned S3 URL", "https://b.s3.amazonaws.com/k?X-Amz-Credential=" + fakeAWSID + "%2F20260101%2Fus-east-1%2Fs3&X-Amz-Signature=" + strings.Repeat("ab12", 16),
			[]part{{KindAWSKeyID, fakeAWSID}, {KindPassword, strings.Repeat("ab12", 16)}}},
		// names as pairs
		{"secretAccessKey pair", `secretAccessKey: "s3cr3tValue"`, []part{{KindPassword, "s3cr3tValue"}}},
		{"AWS_SECRET env line", "AWS_SECRET=s3cr3tValue", []part{{KindPassword, "s3cr3tValue"}}},
		{"two-word name", "New password: hunter2", []part{{KindPassword, "hunter2"}}},
		{"folded name", "pa\u017f\u017fword=hunter2", []part{{KindPassword, "hunter2"}}},
		{"header with a scheme", "Authorization: Token abc123def", []part{{KindPassword, "abc123def"}}},
		{"header to the end of the line", "Cookie: session=abc; theme=dark\nnext", []part{{KindPassword, "session=abc; theme=dark"}}},
		{"header, the scheme's detector first", "Proxy-Authorization: Basic dXNlcjpwYXNz", []part{{KindBasic, "dXNlcjpwYXNz"}}},
		{"quoted value with escapes", `"token": "a\"b c"`, []part{{KindPassword, `a\"b c`}}},
		{"a token glued to a name by _", "fetch_" + fakeGitHub, []part{{KindGitHub, fakeGitHub}}},
		{"a key id glued by _", "key_" + fakeAWSID + "_old", []part{{KindAWSKeyID, fakeAWSID}}},
		// random-looking
		{"random run", "see " + fakeRandom32 + " here", []part{{KindEntropy, fakeRandom32}}},
		{"random run, 64", fakeRandom64, []part{{KindEntropy, fakeRandom64}}},
		{"random part of a URL path", "https://api.example.com/v1/files/" + fakeRandom32 + "/raw",
			[]part{{KindEntropy, fakeRandom32}}},
		{"random query value", "https://example.com/cb?code=" + fakeRandom32 + "&state=ok", []part{{KindEntropy, fakeRandom32}}},
		{"random run cut by _ from words", "build_" + fakeRandom32, []part{{KindEntropy, fakeRandom32}}},
		// encoded
		{"base64 of a token", "blob " + b64(fakeGitHub), []part{{KindBase64, b64(fakeGitHub)}}},
		{"base64 of a password pair", "blob " + b64("password=hunter2"), []part{{KindBase64, b64("password=hunter2")}}},
		{"base64url of JSON with a token", "blob " + base64.RawURLEncoding.EncodeToString([]byte(`{"token":"abc123"}`)),
			[]part{{KindBase64, base64.RawURLEncoding.EncodeToString([]byte(`{"token":"abc123"}`))}}},
		{"base64 of base64", "blob " + b64(b64("password=hunter2")), []part{{KindBase64, b64(b64("password=hunter2"))}}},
		{"base64 in a path part", "/files/" + b64(fakeGitHub) + "/raw", []part{{KindBase64, b64(fakeGitHub)}}},
		{"hex of a password pair", "blob " + hex.EncodeToString([]byte("password=hunter2")),
			[]part{{KindHex, hex.EncodeToString([]byte("password=hunter2"))}}},
		{"URL-encoded token", "https://x.example/cb?next=%2Fhome%3Ftoken%3D" + fakeGitHub, []part{{KindGitHub, fakeGitHub}}},
		{"URL-encoded pair", "q=password%3Dhunter2", []part{{KindPassword, "hunter2"}}},
		{"URL-encoded key id", "id=%41KIAIOSFODNN7EXAMPLE", []part{{KindAWSKeyID, "%41KIAIOSFODNN7EXAMPLE"}}},
		{"double URL-encoded pair", "q=password%253Dhunter2", []part{{KindPassword, "hunter2"}}},
		{"base64 of text without a secret (false)", "blob " + b64("just some words here"), nil},
		{"hex of text without a secret (false)", hex.EncodeToString([]byte("just some words")), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := want(t, tc.in, tc.parts...)
			if got := r.Text(tc.in); got != w {
				t.Fatalf("Text(%q)\n got  %q\n want %q", tc.in, got, w)
			}
			if got := r.Text(w); got != w {
				t.Fatalf("not idempotent: %q -> %q", w, got)
			}
			if len(tc.parts) == 0 && len(r.Find(tc.in)) > 0 {
				t.Fatalf("Find(%q) = %+v", tc.in, r.Find(tc.in))
			}
		})
	}
}

// testdata/nonsecrets.json: real-world values an auditor needs to read,
// among them the random-looking kinds the entropy detector leaves alone
// (UUIDs, digests, images, certificates, public keys) and the words it
// must not take for random.
func TestNonSecrets(t *testing.T) {
	data, err := os.ReadFile("testdata/nonsecrets.json")
	if err != nil {
		t.Fatal(err)
	}
	var items []struct{ What, Text string }
	if err := json.Unmarshal(data, &items); err != nil {
		t.Fatal(err)
	}
	if len(items) < 30 {
		t.Fatalf("%d items", len(items))
	}
	r := newTest(t, Options{})
	for _, it := range items {
		if f := r.Find(it.Text); len(f) > 0 {
			t.Errorf("%s: %q: found %s at %d-%d (%q)", it.What, it.Text, f[0].Kind, f[0].Start, f[0].End, it.Text[f[0].Start:f[0].End])
		}
		doc, _ := json.Marshal(map[string]string{"value": it.Text})
		out, err := r.JSON(doc)
		var back map[string]string
		if err == nil {
			err = json.Unmarshal(out, &back)
		}
		if err != nil || back["value"] != it.Text {
			t.Errorf("%s: JSON changed it: %s (%v)", it.What, out, err)
		}
	}
}

// The entropy detector on the declared names (functions, types, constants,
// variables and fields, 24 characters or more) of the Go distribution's
// hand-written sources: the few it hides mix acronyms and digits
// (oidSignatureSHA256WithRSA). It may hide no more than half a percent.
func TestIdentifiersAreNotRandom(t *testing.T) {
	f, err := os.Open("testdata/go-identifiers.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := newTest(t, Options{})
	n, found := 0, []string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
		if len(r.Find(sc.Text())) > 0 {
			found = append(found, sc.Text())
		}
	}
	if n < 2000 {
		t.Fatalf("%d names", n)
	}
	if len(found)*200 > n {
		t.Fatalf("%d of %d names taken for secrets: %q", len(found), n, found)
	}
	t.Logf("%d of %d names taken for secrets: %q", len(found), n, found)
}

// The entropy detector's reach on random strings of the common secret
// alphabets, drawn from a fixed seed: the share it misses by length.
func TestRandomStringsFound(t *testing.T) {
	r := newTest(t, Options{})
	rng := rand.New(rand.NewPCG(7, 11))
	alphabets := map[string]string{
		"base62":    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
		"base64":    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
		"base64url": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
	}
	// Most misses a length may have, in percent (measured: 5.7, 3.1, 1.4,
	// 0.8 for base62).
	for _, lim := range []struct {
		n    int
		miss float64
	}{{24, 8}, {32, 5}, {40, 2.5}, {64, 1.5}, {128, 0.5}} {
		for name, alpha := range alphabets {
			const tries = 2000
			missed := 0
			for range tries {
				b := make([]byte, lim.n)
				for j := range b {
					b[j] = alpha[rng.IntN(len(alpha))]
				}
				if len(r.Find("value "+string(b)+" end")) == 0 {
					missed++
				}
			}
			pct := 100 * float64(missed) / tries
			if pct > lim.miss {
				t.Errorf("%s, %d characters: %.1f%% missed, at most %.1f%%", name, lim.n, pct, lim.miss)
			}
			t.Logf("%s, %d characters: %.1f%% missed", name, lim.n, pct)
		}
	}
}

func TestEntropyFloor(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want float64
	}{{1, 3.85}, {24, 3.85}, {28, 4.0}, {40, 4.4}, {256, 5.5}, {10000, 5.5}} {
		if got := EntropyFloor(tc.n); got < tc.want-1e-9 || got > tc.want+1e-9 {
			t.Errorf("EntropyFloor(%d) = %v, want %v", tc.n, got, tc.want)
		}
	}
	if Entropy("aaaa") != 0 || Entropy("ab") != 1 || Entropy("") != 0 {
		t.Fatal("Entropy")
	}
}
