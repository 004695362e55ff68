package keys

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kubeletLayout makes a folder as the kubelet writes a Secret volume: the files in a timestamped
// folder, ..data linking to it, and each name linking through ..data.
func kubeletLayout(t *testing.T, mode os.FileMode) string {
	t.Helper()
	dir := t.TempDir()
	ts := filepath.Join(dir, "..2026_12_01_09_52_20.1234")
	if err := os.Mkdir(ts, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ts, "copy.key"), []byte("value\n"), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(ts, "copy.key"), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..2026_12_01_09_52_20.1234", filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..data/copy.key", filepath.Join(dir, "copy.key")); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "copy.key")
}

func TestSecretFileModeOnKubeletVolume(t *testing.T) {
	plainDir := t.TempDir()
	plain := filepath.Join(plainDir, "copy.key")
	if err := os.WriteFile(plain, []byte("value\n"), 0o440); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(plain, 0o440); err != nil {
		t.Fatal(err)
	}
	linked := filepath.Join(plainDir, "linked.key")
	if err := os.Symlink("copy.key", linked); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		path  string
		warns bool
		fails bool
	}{
		{"kubelet volume, group read (fsGroup)", kubeletLayout(t, 0o440), false, false},
		{"kubelet volume, group write", kubeletLayout(t, 0o460), true, false},
		{"kubelet volume, others read", kubeletLayout(t, 0o444), false, true},
		{"plain file, group read", plain, true, false},
		{"a link, but no ..data", linked, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var logs bytes.Buffer
			src := newFileSource(c.path, c.path, "", Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			v, err := src.Read(context.Background())
			if c.fails {
				if err == nil || !strings.Contains(err.Error(), "gives others access") {
					t.Fatalf("want refused for others' access, got %q, %v", v, err)
				}
				return
			}
			if err != nil || string(v) != "value" {
				t.Fatalf("read %q, %v", v, err)
			}
			if warned := strings.Contains(logs.String(), "gives its group access"); warned != c.warns {
				t.Fatalf("warned %v, want %v: %s", warned, c.warns, logs.String())
			}
		})
	}
}
