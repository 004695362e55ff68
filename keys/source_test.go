package keys

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/keys/vault"
)

func TestParseSource(t *testing.T) {
	vc, err := vault.New(vault.Options{Address: "http://127.0.0.1:1", Auth: vault.Auth{Token: &vault.TokenAuth{}}})
	if err != nil {
		t.Fatal(err)
	}
	defer vc.Close()
	withVault := Options{Vault: vc}
	cases := []struct {
		name, spec string
		opts       Options
		describe   string // "" when an error is wanted
		wantErr    string
	}{
		{"relative file", "keys/agent.json", Options{}, "file /base/keys/agent.json", ""},
		{"absolute file", "/etc/x.json", Options{}, "file /etc/x.json", ""},
		{"file prefix with colon", "file:a:b", Options{}, "file /base/a:b", ""},
		{"env", "env:AGENT_KEYS", Options{}, "environment variable AGENT_KEYS", ""},
		{"kv", "vault:secret/mcp/agent#keys", withVault, "field keys of Vault KV v2 secret secret/data/mcp/agent at http://127.0.0.1:1", ""},
		{"transit default mount", "vault-transit:executor", withVault, "Vault Transit key transit/keys/executor at http://127.0.0.1:1 (Ed25519, signs in Vault)", ""},
		{"transit own mount", "vault-transit:signing/executor", withVault, "Vault Transit key signing/keys/executor at http://127.0.0.1:1 (Ed25519, signs in Vault)", ""},
		{"empty", "", Options{}, "", "empty"},
		{"unknown kind", "vualt:secret/x#y", Options{}, "", "unknown kind"},
		{"empty file prefix", "file:", Options{}, "", "no file path"},
		{"bad env name", "env:1ABC", Options{}, "", "not an environment variable name"},
		{"env with dash", "env:A-B", Options{}, "", "not an environment variable name"},
		{"newline", "env:A\nB", Options{}, "", "control character"},
		{"kv without field", "vault:secret/mcp/agent", withVault, "", "want vault:"},
		{"kv without path", "vault:secret#f", withVault, "", "want vault:"},
		{"kv dotdot", "vault:secret/../x#f", withVault, "", "plain segments"},
		{"kv empty segment", "vault:secret//x#f", withVault, "", "plain segments"},
		{"kv without client", "vault:secret/x#f", Options{}, "", "needs the vault settings"},
		{"transit without client", "vault-transit:k", Options{}, "", "needs the vault settings"},
		{"transit bad name", "vault-transit:a/b/c", withVault, "", "want vault-transit"},
		{"secret without client", "secret:ns/name#key", Options{}, "", "needs the kubernetes settings"},
		{"secret upper namespace", "secret:NS/name#key", Options{}, "", "want secret:"},
		{"secret no key", "secret:ns/name", Options{}, "", "want secret:"},
		{"secret bad key", "secret:ns/name#a/b", Options{}, "", "want secret:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src, err := ParseSource(c.spec, "/base", c.opts)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("ParseSource(%q) = %v, want error with %q", c.spec, err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseSource(%q): %v", c.spec, err)
			}
			if src.Name() != c.spec || src.Describe() != c.describe {
				t.Errorf("ParseSource(%q): name %q describe %q, want %q", c.spec, src.Name(), src.Describe(), c.describe)
			}
		})
	}
}

func TestFileSourceRead(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, content string
		mode          os.FileMode
		want          string
		wantErr       string
		warn          bool
	}{
		{"one newline dropped", "abc\n", 0o600, "abc", "", false},
		{"crlf dropped", "abc\r\n", 0o600, "abc", "", false},
		{"only one newline dropped", "abc\n\n", 0o600, "abc\n", "", false},
		{"no newline", "abc", 0o400, "abc", "", false},
		{"group readable warns", secretMark + "\n", 0o640, secretMark, "", true},
		{"world readable refused", secretMark, 0o644, "", "gives others access (mode 0644)", false},
		{"world writable refused", secretMark, 0o602, "", "gives others access", false},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts, logs := testOptions(t)
			p := writeFile(t, dir, "f"+string(rune('a'+i)), c.content, c.mode)
			src, err := ParseSource(filepath.Base(p), dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			got, err := src.Read(context.Background())
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("Read = %v, want error with %q", err, c.wantErr)
				}
				assertNoSecret(t, "error", err.Error())
				return
			}
			if err != nil || string(got) != c.want {
				t.Fatalf("Read = %q, %v; want %q", got, err, c.want)
			}
			if hasWarn := strings.Contains(logs.String(), "group access"); hasWarn != c.warn {
				t.Errorf("warning logged %t, want %t: %s", hasWarn, c.warn, logs)
			}
			assertNoSecret(t, "log", logs.String())
		})
	}
}

func TestFileSourceMissingAndNotRegular(t *testing.T) {
	dir := t.TempDir()
	src, _ := ParseSource("absent", dir, Options{})
	if _, err := src.Read(context.Background()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
	src, _ = ParseSource(".", dir, Options{})
	if _, err := src.Read(context.Background()); err == nil || errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a folder: %v, want a refusal", err)
	}
}

func TestFileSourceCreate(t *testing.T) {
	dir := t.TempDir()
	src, _ := ParseSource("sub/dir/value", dir, Options{})
	c := src.(Creator)
	ctx := context.Background()
	if err := c.Create(ctx, []byte("first")); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "sub/dir/value")
	info, err := os.Stat(p)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("created file: %v, mode %v; want 0600", err, info.Mode())
	}
	if d, _ := os.Stat(filepath.Dir(p)); d.Mode().Perm() != 0o700 {
		t.Errorf("created folder mode %v, want 0700", d.Mode().Perm())
	}
	raw, _ := os.ReadFile(p)
	if string(raw) != "first\n" {
		t.Errorf("file holds %q, want %q", raw, "first\n")
	}
	if err := c.Create(ctx, []byte("second")); !errors.Is(err, fs.ErrExist) {
		t.Errorf("second Create: %v, want fs.ErrExist", err)
	}
	if got, _ := src.Read(ctx); string(got) != "first" {
		t.Errorf("after second Create the file holds %q, want it untouched", got)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "sub/dir/.value.new-*"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestEnvSource(t *testing.T) {
	t.Setenv("KEYS_TEST_SET", "value\n")
	t.Setenv("KEYS_TEST_EMPTY", "")
	ctx := context.Background()
	src, _ := ParseSource("env:KEYS_TEST_SET", "", Options{})
	if got, err := src.Read(ctx); err != nil || string(got) != "value\n" {
		t.Errorf("set: %q, %v; want the value as is", got, err)
	}
	for _, name := range []string{"KEYS_TEST_EMPTY", "KEYS_TEST_UNSET_XYZ"} {
		src, _ := ParseSource("env:"+name, "", Options{})
		if _, err := src.Read(ctx); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: %v, want fs.ErrNotExist", name, err)
		}
		if _, ok := src.(Creator); ok {
			t.Errorf("an environment variable must not be a Creator")
		}
	}
}

func FuzzParseSource(f *testing.F) {
	for _, s := range []string{"a.json", "file:x", "env:A", "vault:secret/a#b", "vault-transit:k", "secret:ns/n#k", "x:y", "", "vault:#", "secret:/#"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		src, err := ParseSource(spec, "/base", Options{})
		if err == nil && (src.Name() != spec || src.Describe() == "") {
			t.Errorf("ParseSource(%q): name %q describe %q", spec, src.Name(), src.Describe())
		}
		if err != nil && src != nil {
			t.Errorf("ParseSource(%q) gave both a source and an error", spec)
		}
	})
}

// TestFileSourceCreateSyncsFolders checks that Create makes durable every
// name it adds: the file's in its folder and each folder it made in its
// parent. A sync leaves no trace to look at, so syncDir is watched.
func TestFileSourceCreateSyncsFolders(t *testing.T) {
	dir := t.TempDir()
	var synced []string
	realSync := syncDir
	syncDir = func(d string) error {
		synced = append(synced, d)
		return realSync(d)
	}
	t.Cleanup(func() { syncDir = realSync })

	src, _ := ParseSource("sub/dir/value", dir, Options{})
	if err := src.(Creator).Create(context.Background(), []byte("v")); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{filepath.Join(dir, "sub/dir"), filepath.Join(dir, "sub"), dir} {
		if !slices.Contains(synced, want) {
			t.Errorf("folder %s not synced after a name was made in it; synced: %v", want, synced)
		}
	}

	syncDir = func(string) error { return errors.New("sync refused") }
	src, _ = ParseSource("other", dir, Options{})
	if err := src.(Creator).Create(context.Background(), []byte("v")); err == nil || !strings.Contains(err.Error(), "sync refused") {
		t.Errorf("a failed folder sync: Create gave %v, want the failure reported", err)
	}
}
