package redact

import (
	"bytes"
	"testing"
)

func TestName(t *testing.T) {
	r := newTest(t, Options{})
	for _, tc := range []struct{ in, kind string }{
		// shown as they are
		{"get_weather", ""},
		{"mcp__github__create_pull_request_review", ""},
		{"fs.read_file", ""},
		{"password", ""}, // a secret's name is not a secret
		{"tools-1", ""},
		{"550e8400-e29b-41d4-a716-446655440000", ""},
		{"42", ""},
		{"", ""},
		// shown by their tag
		{fakeGitHub, KindGitHub},
		{"fetch_" + fakeGitHub, KindGitHub},
		{"run-" + fakeOpenAI, KindOpenAI},
		{fakeAWSID, KindAWSKeyID},
		{"tool_" + fakeRandom32, KindEntropy},
		{b64("password=hunter2"), KindBase64},
		{"password=hunter2", KindPassword},
		{fakeJWT, KindJWT},
	} {
		got := r.Name(tc.in)
		if tc.kind == "" {
			if got != tc.in {
				t.Errorf("Name(%q) = %q, want it as it is", tc.in, got)
			}
			continue
		}
		if got != tok(tc.kind, tc.in) || !Verify(testSalt, tc.in, got) {
			t.Errorf("Name(%q) = %q, want %q", tc.in, got, tok(tc.kind, tc.in))
		}
		if again := r.Name(got); again != got {
			t.Errorf("Name(Name(%q)) = %q", tc.in, again)
		}
		// Stable: another redactor under the same salt (a restart reading
		// the copy's salt) shows it alike, another salt does not.
		if other := newTest(t, Options{}).Name(tc.in); other != got {
			t.Errorf("Name(%q) not stable under one salt: %q, %q", tc.in, got, other)
		}
		if r2, _ := New(bytes.Repeat([]byte{9}, SaltSize), Options{}); r2.Name(tc.in) == got {
			t.Errorf("Name(%q) the same under another salt", tc.in)
		}
	}
}

func TestID(t *testing.T) {
	r := newTest(t, Options{})
	for _, tc := range []struct{ raw, want string }{
		{`7`, "7"},
		{` 12 `, "12"},
		{`"abc"`, "abc"},
		{`"req-550e8400-e29b-41d4-a716-446655440000"`, "req-550e8400-e29b-41d4-a716-446655440000"},
		{`"` + fakeGitHub + `"`, tok(KindGitHub, fakeGitHub)},
		{`"\u0067hp_0123456789abcdefghijABCDEFGHIJ012345"`, tok(KindGitHub, fakeGitHub)}, // escaped: judged as decoded
		{`null`, "null"},
		{`"unterminated`, `"unterminated`},
	} {
		if got := r.ID([]byte(tc.raw)); got != tc.want {
			t.Errorf("ID(%s) = %q, want %q", tc.raw, got, tc.want)
		}
	}
}

func FuzzName(f *testing.F) {
	for _, s := range []string{"get_weather", fakeGitHub, "fetch_" + fakeAWSID, fakeRandom32, "[REDACTED:key:00000000]", "a\x1bb"} {
		f.Add(s)
	}
	r := newTest(f, Options{})
	f.Fuzz(func(t *testing.T, s string) {
		got := r.Name(s)
		if r.Name(got) != got {
			t.Fatalf("Name(%q) = %q, Name of that = %q", s, got, r.Name(got))
		}
		if got == s {
			if !wholeTokenRE.MatchString(s) && len(r.Find(s)) > 0 {
				t.Fatalf("Name(%q) shown though %+v", s, r.Find(s))
			}
			return
		}
		if !Verify(testSalt, s, got) || len(r.Find(got)) > 0 {
			t.Fatalf("Name(%q) = %q", s, got)
		}
	})
}
