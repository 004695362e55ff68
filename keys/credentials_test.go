package keys

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
)

func TestResolveEnv(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "api-token", "tok-from-file\n", 0o600)
	t.Setenv("KEYS_TEST_CRED", "from-env")
	got, err := ResolveEnv(context.Background(), map[string]string{
		"API_TOKEN": "api-token",
		"OTHER":     "env:KEYS_TEST_CRED",
	}, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["API_TOKEN"] != "tok-from-file" || got["OTHER"] != "from-env" {
		t.Errorf("ResolveEnv = %v", got)
	}
}

func TestResolveEnvRefusals(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "nul", secretMark+"\x00x", 0o600)
	writeFile(t, dir, "open", secretMark, 0o644)
	cases := []struct {
		name    string
		sources map[string]string
		wantErr string
		missing bool
	}{
		{"bad name", map[string]string{"A-B": "nul"}, `credential "A-B": not an environment variable name`, false},
		{"nul byte", map[string]string{"TOKEN": "nul"}, "credential TOKEN from nul: holds a NUL byte", false},
		{"open file", map[string]string{"TOKEN": "open"}, "credential TOKEN: reading file", false},
		{"missing", map[string]string{"TOKEN": "env:KEYS_TEST_UNSET_XYZ"}, "credential TOKEN: reading environment variable KEYS_TEST_UNSET_XYZ: not set", true},
		{"bad spec", map[string]string{"TOKEN": "nope:x"}, "credential TOKEN: source", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ResolveEnv(context.Background(), c.sources, dir, Options{})
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("ResolveEnv = %v, want error with %q", err, c.wantErr)
			}
			if errors.Is(err, fs.ErrNotExist) != c.missing {
				t.Errorf("errors.Is(err, fs.ErrNotExist) = %t, want %t", !c.missing, c.missing)
			}
			assertNoSecret(t, "error", err.Error())
		})
	}
}
