package copylog

import (
	"bytes"
	"path/filepath"
	"testing"
)

// A redaction-salt line is written, read back and checked: the latest
// salt wins, and a salt that is not 32 bytes is refused.
func TestRedactionSaltLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "copy")
	l := mustOpen(t, path)
	first, second := bytes.Repeat([]byte{3}, 32), bytes.Repeat([]byte{4}, 32)
	if err := l.Append(Line{Kind: KindRedactionSalt, Salt: SaltText(first)}, Line{Kind: KindRedactionSalt, Salt: SaltText(second)}); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(Line{Kind: KindRedactionSalt, Salt: SaltText([]byte("short"))}); err == nil {
		t.Error("a salt of 5 bytes is written")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	lines, err := ReadFile(path, testKey, testName)
	if err != nil {
		t.Fatal(err)
	}
	if got := LatestSalt(lines); !bytes.Equal(got, second) {
		t.Fatalf("LatestSalt = %x, want %x", got, second)
	}
	if LatestSalt(nil) != nil {
		t.Error("a copy without a salt line has a salt")
	}
}
