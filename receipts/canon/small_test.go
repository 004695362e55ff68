package canon

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
)

func TestUnB64(t *testing.T) {
	for _, c := range []struct {
		name, text string
		ok         bool
	}{
		{"sixteen bytes", strings.Repeat("A", 22), true},
		{"a space", "AA A", false},
		{"a newline", "AAAA\n", false},
		{"a carriage return inside", "AA\rAA", false},
		{"a newline in a 4-character text", "AA\nA", false},
		{"padding after two characters", "AA==", false},
		{"one padding character", "AAA=", false},
		{"standard alphabet slash", "a/b_", false},
		{"padding alone", "====", false},
		{"stray bits in a 3-character text", "AAF", false},
		{"no stray bits in a 3-character text", "AAE", true},
		{"five characters", "AAAAA", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := UnB64(c.text)
			if c.ok {
				if err != nil {
					t.Fatal(err)
				}
				if B64(b) != c.text {
					t.Fatalf("round trip gives %q", B64(b))
				}
				return
			}
			if problem.Code(err) != CodeBadBase64url {
				t.Fatalf("got %x, %v", b, err)
			}
		})
	}
}

// FuzzUnB64: whatever UnB64 accepts, B64 writes back unchanged (so each
// byte string has one spelling); whatever it refuses carries its code.
func FuzzUnB64(f *testing.F) {
	for _, s := range []string{"", "AA", "AAE", "AAEC", "A", "AA==", "AB", "a+b_", "AAA\u00e9", "-_-_", "AAAAAA\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := UnB64(s)
		if err != nil {
			if problem.Code(err) != CodeBadBase64url {
				t.Fatalf("code %q: %v", problem.Code(err), err)
			}
			return
		}
		if B64(b) != s {
			t.Fatalf("UnB64 accepted %q but B64 gives %q", s, B64(b))
		}
		again, err := UnB64(B64(b))
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("round trip of %x fails: %v", b, err)
		}
	})
}

// unB64Reference is UnB64 as it was written before its fast path: every
// character looked at in turn, then the length, then the strict decoder.
func unB64Reference(s string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return nil, problem.New(CodeBadBase64url, "a character outside the base64url alphabet at position %d", i)
		}
	}
	if len(s)%4 == 1 {
		return nil, problem.New(CodeBadBase64url, "a base64url text cannot be %d characters long", len(s))
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil {
		return nil, problem.New(CodeBadBase64url, "not strict base64url: %v", err)
	}
	return b, nil
}

// FuzzUnB64Reference: the fast path accepts exactly what the character by
// character reading accepts, with the same bytes, and refuses the rest with
// the same words.
func FuzzUnB64Reference(f *testing.F) {
	for _, s := range []string{"", "AA", "AAE", "AAF", "A", "AA==", "AAA=", "AA\nA", "AAAA\r\n", "\nAAA", "a+b_", "AAA\u00e9", strings.Repeat("Ab", 300)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := UnB64(s)
		want, werr := unB64Reference(s)
		if (err == nil) != (werr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("%q: got %x, %v; the reference gives %x, %v", s, got, err, want, werr)
		}
		if err != nil && err.Error() != werr.Error() {
			t.Fatalf("%q: %q; the reference says %q", s, err, werr)
		}
	})
}

func TestFingerprint(t *testing.T) {
	sum := sha256.Sum256([]byte("abc"))
	fp := Fingerprint([]byte("abc"))
	if fp != B64(sum[:]) || len(fp) != 43 {
		t.Fatalf("Fingerprint = %q", fp)
	}
	// SHA-256 of the empty text, as every b64u implementation writes it.
	if got := Fingerprint(nil); got != "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU" {
		t.Fatalf("Fingerprint(nil) = %s", got)
	}
	for _, c := range []struct {
		s  string
		ok bool
	}{
		{fp, true},
		{fp[:42], false},
		{fp + "A", false},
		{strings.Repeat("A", 43), true},
		{strings.Repeat("A", 42) + "B", false}, // stray bits
		{strings.Repeat("A", 42) + "=", false},
		{strings.Repeat("A", 42) + "+", false},
	} {
		if IsFingerprint(c.s) != c.ok {
			t.Errorf("IsFingerprint(%q) = %v", c.s, !c.ok)
		}
	}
}

func TestIDs(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		id := NewID()
		if !IsID(id) || len(id) != 22 {
			t.Fatalf("NewID gave %q", id)
		}
		if seen[id] {
			t.Fatalf("NewID repeated %q", id)
		}
		seen[id] = true
	}
	for _, s := range []string{"", strings.Repeat("A", 21), strings.Repeat("A", 23), strings.Repeat("A", 21) + "B", strings.Repeat("A", 21) + "=", strings.Repeat("A", 24)} {
		if IsID(s) {
			t.Errorf("IsID(%q) = true", s)
		}
	}
	if !IsID(strings.Repeat("A", 21) + "w") {
		t.Error("IsID refuses a valid id ending in w")
	}
}

func TestTimes(t *testing.T) {
	for _, s := range []string{"2026-10-05T09:00:00z", "2026-10-05t09:00:00Z", "+026-10-05T09:00:00Z", "2026-1a-05T09:00:00Z", "2100-02-29T00:00:00Z", "2026-10-00T00:00:00Z", "2026-10-05T09:60:00Z"} {
		if tm, ok := ParseTime(s); ok {
			t.Errorf("ParseTime(%q) accepted as %v", s, tm)
		}
	}
	if _, ok := ParseTime("2000-02-29T00:00:00Z"); !ok {
		t.Error("2000-02-29 refused")
	}
	local := time.Date(2026, 10, 5, 11, 0, 0, 999_000_000, time.FixedZone("x", 2*3600))
	if got := FormatTime(local); got != "2026-10-05T09:00:00Z" {
		t.Errorf("FormatTime = %s", got)
	}
	if got := FormatTime(time.Date(7, 1, 2, 3, 4, 5, 0, time.UTC)); got != "0007-01-02T03:04:05Z" {
		t.Errorf("FormatTime of year 7 = %s", got)
	}
}

func TestChars(t *testing.T) {
	if got := Chars("e\u0301\U0001F600"); got != 3 {
		t.Fatalf("Chars = %d", got)
	}
}
