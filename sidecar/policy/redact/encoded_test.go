package redact

import (
	"bytes"
	"encoding/base64"
	"net/url"
	"strings"
	"testing"
)

func TestDecodeBase64(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		ok   bool
	}{
		{"cGFzc3dvcmQ9aHVudGVyMg==", "password=hunter2", true},
		{"cGFzc3dvcmQ9aHVudGVyMg", "password=hunter2", true},
		{"-_-_", "\xfb\xff\xbf", true},
		{"+/+/", "\xfb\xff\xbf", true},
		{"-_+/", "", false}, // two alphabets
		{"abcde", "", false},
		{"ab===", "", false},
		{"", "", false},
	} {
		got, ok := DecodeBase64(tc.in)
		if ok != tc.ok || ok && string(got) != tc.want {
			t.Errorf("DecodeBase64(%q) = %q, %v", tc.in, got, ok)
		}
	}
}

// FuzzDecodeBase64 holds the base64 detector's decoder to encoding/base64:
// what it decodes, one of the four encodings decodes alike, and what they
// encode it decodes back.
func FuzzDecodeBase64(f *testing.F) {
	for _, s := range []string{"cGFzc3dvcmQ9aHVudGVyMg==", "-_-_", "Zg", "Zg=", "Zm8=", "A", "===="} {
		f.Add(s)
	}
	encs := []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := DecodeBase64(s)
		if ok {
			agrees := false
			for _, e := range encs {
				if b, err := e.DecodeString(s); err == nil && bytes.Equal(b, got) {
					agrees = true
				}
			}
			// Padding is not required to be complete: one of the raw
			// encodings agrees on the text without it.
			if b, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "=")); err == nil && bytes.Equal(b, got) {
				agrees = true
			}
			if b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "=")); err == nil && bytes.Equal(b, got) {
				agrees = true
			}
			if !agrees {
				t.Fatalf("DecodeBase64(%q) = %q: no encoding of the standard library reads it so", s, got)
			}
		}
		for _, e := range encs {
			enc := e.EncodeToString([]byte(s))
			if b, ok := DecodeBase64(enc); len(s) > 0 && (!ok || string(b) != s) {
				t.Fatalf("DecodeBase64(%q) = %q, %v; want %q", enc, b, ok, s)
			}
		}
	})
}

func FuzzPercentDecode(f *testing.F) {
	for _, s := range []string{"a%20b", "%", "%4", "%41%42", "100%", "%zz%2F", "caf%C3%A9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, from := PercentDecode(s)
		if len(from) != len(d)+1 || from[len(d)] != len(s) {
			t.Fatalf("PercentDecode(%q): %d bytes, %d offsets", s, len(d), len(from))
		}
		for i := range d {
			if from[i] >= from[i+1] || from[i+1]-from[i] > 3 {
				t.Fatalf("PercentDecode(%q): offsets %v", s, from)
			}
			if from[i+1]-from[i] == 1 && s[from[i]] != d[i] {
				t.Fatalf("PercentDecode(%q): byte %d", s, i)
			}
		}
		if !strings.Contains(s, "+") {
			if want, err := url.PathUnescape(s); err == nil && want != d {
				t.Fatalf("PercentDecode(%q) = %q, url.PathUnescape says %q", s, d, want)
			}
		}
	})
}
