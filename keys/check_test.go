package keys

import (
	"context"
	"strings"
	"testing"
)

func TestCheckSource(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "present", secretMark, 0o600)
	writeFile(t, dir, "open", secretMark, 0o644)
	cases := []struct {
		spec             string
		auth             string
		reached, present bool
	}{
		{"present", "file", true, true},
		{"absent", "file", true, false},
		{"open", "file", false, false},
		{"env:KEYS_TEST_UNSET_XYZ", "environment", true, false},
		{"bad:spec", "", false, false},
	}
	for _, c := range cases {
		st := CheckSource(context.Background(), c.spec, dir, Options{})
		if st.Auth != c.auth || st.Reached != c.reached || st.Present != c.present || (st.Err == nil) != c.present {
			t.Errorf("CheckSource(%q) = %+v", c.spec, st)
		}
		if st.Err != nil {
			assertNoSecret(t, "error", st.Err.Error())
		}
	}
}

func TestCheckKeySet(t *testing.T) {
	dir := t.TempDir()
	s, _, err := LoadOrCreateKeySet(context.Background(), KeySetSpec{Source: "k.json"}, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := CheckKeySet(context.Background(), KeySetSpec{Source: "k.json"}, dir, Options{})
	if st.Err != nil || st.Fingerprint != s.Keys().Fingerprint() || st.Transit || len(st.Sources) != 1 || !st.Sources[0].Present {
		t.Errorf("CheckKeySet = %+v", st)
	}
	st = CheckKeySet(context.Background(), KeySetSpec{Source: "none.json"}, dir, Options{})
	if st.Err == nil || !strings.Contains(st.Err.Error(), "none.json") || st.Fingerprint != "" {
		t.Errorf("CheckKeySet of a missing key set = %+v", st)
	}
}
