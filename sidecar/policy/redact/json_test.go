package redact

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// jsonCase is a document and what JSON must make of it.
type jsonCase struct {
	name, in, want string
}

func checkJSON(t *testing.T, r *Redactor, cases []jsonCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := r.JSON([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tc.want {
				t.Fatalf("JSON(%s)\n got  %s\n want %s", tc.in, out, tc.want)
			}
			again, err := r.JSON(out)
			if err != nil || !bytes.Equal(again, out) {
				t.Fatalf("not idempotent:\n once  %s\n twice %s (%v)", out, again, err)
			}
		})
	}
}

func q(s string) string { b, _ := json.Marshal(s); return string(b) }

func TestJSONSecretNames(t *testing.T) {
	r := newTest(t, Options{})
	var cases []jsonCase
	for _, n := range secretNames {
		cases = append(cases, jsonCase{"secret " + n, `{` + q(n) + `:"v4lue"}`, `{` + q(n) + `:"` + tok(KindKey, "v4lue") + `"}`})
	}
	for _, n := range harmlessNames {
		cases = append(cases, jsonCase{"harmless " + n, `{` + q(n) + `:"v4lue"}`, `{` + q(n) + `:"v4lue"}`})
	}
	checkJSON(t, r, cases)
}

func TestJSONProviders(t *testing.T) {
	r := newTest(t, Options{})
	checkJSON(t, r, []jsonCase{
		{"aws sdk credentials",
			`{"credentials":{"accessKeyId":"` + fakeAWSID + `","secretAccessKey":"` + fakeAWSSecret + `"},"region":"eu-west-1"}`,
			`{"credentials":"` + tok(KindKey, `{"accessKeyId":"`+fakeAWSID+`","secretAccessKey":"`+fakeAWSSecret+`"}`) + `","region":"eu-west-1"}`},
		{"aws sdk members",
			`{"accessKeyId":"` + fakeAWSID + `","secretAccessKey":"` + fakeAWSSecret + `","sessionToken":"FwoGZXIvYXdzEJr"}`,
			`{"accessKeyId":"` + tok(KindAWSKeyID, fakeAWSID) + `","secretAccessKey":"` + tok(KindKey, fakeAWSSecret) + `","sessionToken":"` + tok(KindKey, "FwoGZXIvYXdzEJr") + `"}`},
		{"aws secret under a harmless name, beside a key id in another member",
			`{"id":"` + fakeAWSID + `","s":"` + fakeAWSSecret + `"}`,
			`{"id":"` + tok(KindAWSKeyID, fakeAWSID) + `","s":"` + tok(KindAWSSecret, fakeAWSSecret) + `"}`},
		{"aws secret without a key id in the call (words: not random)",
			`{"s":"` + fakeAWSSecret + `"}`, `{"s":"` + fakeAWSSecret + `"}`},
		{"a URL-encoded key id is context too",
			`{"u":"id=%41KIAIOSFODNN7EXAMPLE","s":"` + fakeAWSSecret + `"}`,
			`{"u":"id=` + tok(KindAWSKeyID, "%41KIAIOSFODNN7EXAMPLE") + `","s":"` + tok(KindAWSSecret, fakeAWSSecret) + `"}`},
		{"azure",
			`{"tenantId":"t","clientId":"c","clientSecret":"` + fakeAzure + `","AccountName":"acct","AccountKey":"Zm9vYmFy"}`,
			`{"tenantId":"t","clientId":"c","clientSecret":"` + tok(KindKey, fakeAzure) + `","AccountName":"acct","AccountKey":"` + tok(KindKey, "Zm9vYmFy") + `"}`},
		{"azure secret under a harmless name", `{"note":"` + fakeAzure + `"}`, `{"note":"` + tok(KindAzure, fakeAzure) + `"}`},
		{"gcp service account",
			`{"type":"service_account","project_id":"p","private_key_id":"1a2b","private_key":"-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n","client_email":"sa@p.iam.gserviceaccount.com","client_id":"1"}`,
			`{"type":"service_account","project_id":"p","private_key_id":"` + tok(KindKey, "1a2b") + `","private_key":"` + tok(KindKey, "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n") + `","client_email":"sa@p.iam.gserviceaccount.com","client_id":"1"}`},
		{"non-text values under secret names",
			`{"token":12345,"password":true,"secret":[1,"a"],"apiKey":null,"pwd":""}`,
			`{"token":"` + tok(KindKey, "12345") + `","password":"` + tok(KindKey, "true") + `","secret":"` + tok(KindKey, `[1,"a"]`) + `","apiKey":null,"pwd":""}`},
		{"LLM parameters stay", `{"max_tokens":1024,"tokenCount":12,"temperature":0.2}`, `{"max_tokens":1024,"tokenCount":12,"temperature":0.2}`},
	})
}

func TestJSONUserPartners(t *testing.T) {
	r := newTest(t, Options{})
	checkJSON(t, r, []jsonCase{
		{"user and pin", `{"user":"bob","pin":"1234"}`, `{"user":"bob","pin":"` + tok(KindKey, "1234") + `"}`},
		{"email and key", `{"key":"k-1","email":"a@b.example"}`, `{"key":"` + tok(KindKey, "k-1") + `","email":"a@b.example"}`},
		{"login and pw", `{"login":"bob","pw":"x"}`, `{"login":"bob","pw":"` + tok(KindKey, "x") + `"}`},
		{"key without a user (false)", `{"bucket":"b","key":"reports/2024.csv"}`, `{"bucket":"b","key":"reports/2024.csv"}`},
		{"pin without a user (false)", `{"pin":true,"version":"1.2"}`, `{"pin":true,"version":"1.2"}`},
		{"only within the object naming the user", `{"user":"bob","opts":{"key":"sortKey"}}`, `{"user":"bob","opts":{"key":"sortKey"}}`},
	})
	off := newTest(t, Options{ReplaceBuiltin: true, ExtendKeys: []string{"x"}})
	checkJSON(t, off, []jsonCase{{"not with the built-ins off", `{"user":"bob","pin":"1234"}`, `{"user":"bob","pin":"1234"}`}})
}

func TestJSONSplits(t *testing.T) {
	r := newTest(t, Options{})
	half1, half2 := fakeGitHub[:20], fakeGitHub[20:]
	ant1, ant2, ant3 := "sk-", "ant-", "api03-Zx9Yw8Vu7Ts6Rq5"
	split := func(s string) string { return tok(KindSplit, s) }
	checkJSON(t, r, []jsonCase{
		{"a token in two members", `{"a":"` + half1 + `","b":"` + half2 + `"}`,
			`{"a":"` + split(half1) + `","b":"` + split(half2) + `"}`},
		{"a token in two array elements", `["` + half1 + `","` + half2 + `"]`, `["` + split(half1) + `","` + split(half2) + `"]`},
		{"a token in three members", `{"a":"` + ant1 + `","b":"` + ant2 + `","c":"` + ant3 + `"}`,
			`{"a":"` + split(ant1) + `","b":"` + split(ant2) + `","c":"` + split(ant3) + `"}`},
		{"a key id in two members", `{"p":"AKIA","r":"IOSFODNN7EXAMPLE"}`, `{"p":"` + split("AKIA") + `","r":"` + split("IOSFODNN7EXAMPLE") + `"}`},
		// The member holding the secret's bytes is redacted, not the one
		// that names it.
		{"scheme and credential", `{"scheme":"Bearer ","cred":"abc123DEF456ghi789"}`,
			`{"scheme":"Bearer ","cred":"` + split("abc123DEF456ghi789") + `"}`},
		{"a connection string in two", `{"u":"postgres://app:","v":"s3cr3t@db/app"}`,
			`{"u":"postgres://app:","v":"` + split("s3cr3t@db/app") + `"}`},
		{"a pair in two", `{"k":"password=","v":"hunter2"}`, `{"k":"password=","v":"` + split("hunter2") + `"}`},
		{"a secret name's value in the next member", `{"k":"api_key:","v":"abc"}`, `{"k":"api_key:","v":"` + split("abc") + `"}`},
		{"base64 in two", `{"a":"cGFzc3dv","b":"cmQ9aHVudGVyMg=="}`, `{"a":"` + split("cGFzc3dv") + `","b":"` + split("cmQ9aHVudGVyMg==") + `"}`},
		{"across nesting, in document order", `{"a":{"x":"` + half1 + `"},"b":["` + half2 + `"]}`,
			`{"a":{"x":"` + split(half1) + `"},"b":["` + split(half2) + `"]}`},
		{"a long member's end and the next one's start",
			`{"a":"` + strings.Repeat("lorem ipsum ", 50) + half1 + `","b":"` + half2 + strings.Repeat(" dolor", 60) + `"}`,
			`{"a":"` + split(strings.Repeat("lorem ipsum ", 50)+half1) + `","b":"` + split(half2+strings.Repeat(" dolor", 60)) + `"}`},
		// Not splits:
		{"two random ids side by side (the entropy detector does not join)", `{"a":"Xk9qLm2Pz8Rt","b":"4Vw7Yb3Nc6Hd1sF5"}`,
			`{"a":"Xk9qLm2Pz8Rt","b":"4Vw7Yb3Nc6Hd1sF5"}`},
		{"names", `{"first":"Ada","last":"Lovelace"}`, `{"first":"Ada","last":"Lovelace"}`},
		{"prose ending in a secret name", `{"title":"Reset password:","body":"Click the link"}`,
			`{"title":"Reset password:","body":"Click the link"}`},
		{"a secret whole in one member is not a split",
			`{"a":"x","b":"` + fakeGitHub + `","c":"y"}`, `{"a":"x","b":"` + tok(KindGitHub, fakeGitHub) + `","c":"y"}`},
		{"a value under a secret name does not join its neighbours",
			`{"a":"` + half1 + `","token":"t","b":"` + half2 + `"}`,
			`{"a":"` + split(half1) + `","token":"` + tok(KindKey, "t") + `","b":"` + split(half2) + `"}`},
		{"four members: not caught", `{"a":"ghp_","b":"0123456789","c":"abcdefghijABCDEFGHIJ","d":"012345"}`,
			`{"a":"ghp_","b":"0123456789","c":"abcdefghijABCDEFGHIJ","d":"012345"}`},
	})
}

func TestJSONNamesShown(t *testing.T) {
	r := newTest(t, Options{})
	checkJSON(t, r, []jsonCase{
		{"a member name that is a token", `{"` + fakeGitHub + `":1}`, `{"` + tok(KindGitHub, fakeGitHub) + `":1}`},
		{"a member name holding a token is shown whole by its tag", `{"x-` + fakeGitHub + `":1}`, `{"` + tok(KindGitHub, "x-"+fakeGitHub) + `":1}`},
		{"a secret name is shown", `{"password":"p"}`, `{"password":"` + tok(KindKey, "p") + `"}`},
		{"a name that is a token and a key",
			`{"` + fakeGitHub + `_token":"v"}`, `{"` + tok(KindGitHub, fakeGitHub+"_token") + `":"` + tok(KindKey, "v") + `"}`},
	})
}

func TestJSONKeepsNumbersAndOrder(t *testing.T) {
	r := newTest(t, Options{})
	in := `{"z":1e400,"a":-0.0,"m":[1.50,2E+3,{"k":123456789012345678901234567890}],"e":{},"l":[]}`
	out, err := r.JSON([]byte(in))
	if err != nil || string(out) != in {
		t.Fatalf("%s %v", out, err)
	}
	// A big number under a secret name: its compact text, as VerifyJSON
	// reads it.
	out, err = r.JSON([]byte(`{"secret": { "n" : 1e400 }}`))
	if err != nil || !VerifyJSON(testSalt, []byte(`{ "n" : 1e400 }`), strings.Trim(string(out)[len(`{"secret":`):len(out)-1], `"`)) {
		t.Fatalf("%s %v", out, err)
	}
}
