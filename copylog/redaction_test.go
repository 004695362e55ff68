package copylog

import (
	"bytes"
	"path/filepath"
	"strings"
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
	// A second spelling of a salt (unused trailing bits set) is refused, as
	// canon.UnB64 refuses it everywhere else in the format.
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	text := SaltText(second)
	loose := text[:len(text)-1] + string(alphabet[strings.IndexByte(alphabet, text[len(text)-1])|1])
	if err := l.Append(Line{Kind: KindRedactionSalt, Salt: loose}); err == nil {
		t.Errorf("a salt spelt %q, with unused bits set, is written", loose)
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
