package keys

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
)

func TestCopyKey(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	if _, err := LoadCopyKey(ctx, "copy.key", dir, Options{}); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("LoadCopyKey of a missing key: %v, want fs.ErrNotExist (compare needs the key)", err)
	}
	k1, created, err := LoadOrCreateCopyKey(ctx, "copy.key", dir, Options{})
	if err != nil || !created || len(k1) != CopyKeySize {
		t.Fatalf("LoadOrCreateCopyKey: %d bytes, created %t, %v", len(k1), created, err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "copy.key"))
	if string(raw) != canon.B64(k1)+"\n" {
		t.Errorf("stored copy key %q, want base64url of the key and a newline", raw)
	}
	k2, err := LoadCopyKey(ctx, "copy.key", dir, Options{})
	if err != nil || string(k1) != string(k2) {
		t.Errorf("LoadCopyKey after create: %v, same key %t", err, string(k1) == string(k2))
	}
	k3, created, err := LoadOrCreateCopyKey(ctx, "copy.key", dir, Options{})
	if err != nil || created || string(k3) != string(k1) {
		t.Errorf("second LoadOrCreateCopyKey: created %t, %v", created, err)
	}
}

func TestCopyKeyRefusals(t *testing.T) {
	cases := map[string]string{
		"too short":      secretMark,
		"raw 32 bytes":   strings.Repeat("k", 32),
		"44 characters":  strings.Repeat("A", 44),
		"not base64url":  strings.Repeat("+", 43),
		"non-zero tail":  strings.Repeat("A", 42) + "B",
		"secret at 43ch": (secretMark + strings.Repeat("!", 43))[:43],
	}
	for name, v := range cases {
		t.Run(name, func(t *testing.T) {
			t.Setenv("KEYS_TEST_COPY", v)
			_, err := LoadCopyKey(context.Background(), "env:KEYS_TEST_COPY", "", Options{})
			if err == nil || !strings.Contains(err.Error(), "not 43 characters of base64url") {
				t.Fatalf("LoadCopyKey = %v, want a refusal", err)
			}
			assertNoSecret(t, "error", err.Error())
			if strings.Contains(err.Error(), v) {
				t.Errorf("error quotes the value: %v", err)
			}
		})
	}
}

func FuzzParseCopyKey(f *testing.F) {
	f.Add(NewCopyKey())
	f.Add([]byte(strings.Repeat("A", 43)))
	f.Add([]byte("short"))
	f.Fuzz(func(t *testing.T, text []byte) {
		k, err := ParseCopyKey(text)
		if err != nil {
			return
		}
		if len(k) != CopyKeySize || canon.B64(k) != string(text) {
			t.Errorf("ParseCopyKey(%q) = %d bytes; not the one spelling of a 32-byte key", text, len(k))
		}
	})
}
