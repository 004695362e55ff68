package redact

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func TestPrintable(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text, café, 日本, emoji 🙂", "plain text, café, 日本, emoji 🙂"},
		{"\x1b[2J\x07", `\x1b[2J\x07`},                                                      // clear screen, bell
		{"\x1b]0;owned\x07title", `\x1b]0;owned\x07title`},                                  // window title
		{"\x1b]8;;https://evil.example\x1b\\link", `\x1b]8;;https://evil.example\x1b\link`}, // hyperlink
		{"a\nb\rc\td", `a\nb\rc\td`},
		{"nul\x00del\x7f", `nul\x00del\x7f`},
		{"csi\u009b2J", `csi\u009b2J`}, // C1 CSI
		{"safe\u202eexe.txt", `safe\u202eexe.txt`},
		{"\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069\u200e\u200f\u061c", `\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069\u200e\u200f\u061c`},
		{"zero\u200bwidth\ufeff", `zero\u200bwidth\ufeff`},
		{"line\u2028para\u2029", `line\u2028para\u2029`},
		{"tag\U000e0041", `tag\U000e0041`},
		{"bad\xff\xc3", `bad\xff\xc3`},
		{`back\slash`, `back\slash`},
		{"", ""},
	} {
		if got := Printable(tc.in); got != tc.want {
			t.Errorf("Printable(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := PrintableLines("a\x1b\nb\u202e"); got != "a\\x1b\nb\\u202e" {
		t.Errorf("PrintableLines = %q", got)
	}
}

func TestPrintableJSON(t *testing.T) {
	in := []byte("{\"name\":\"x\x7f\u009b\u202e\U000e0041\xff\",\"ok\":\"café\"}")
	out := PrintableJSON(in)
	if string(out) != `{"name":"x\u007f\u009b\u202e\udb40\udc41\ufffd","ok":"café"}` {
		t.Fatalf("%s", out)
	}
	clean := []byte(`{"a":"b"}`)
	if got := PrintableJSON(clean); &got[0] != &clean[0] {
		t.Fatal("clean JSON copied")
	}
}

func FuzzPrintable(f *testing.F) {
	for _, s := range []string{"\x1b[2J\x07", "a\u202eb", "\xff", "🙂\u200d🙂", `{"a":"\u001b"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p := Printable(s)
		if !utf8.ValidString(p) {
			t.Fatalf("Printable(%q) = %q: not UTF-8", s, p)
		}
		for _, c := range p {
			if needsEscape(c) {
				t.Fatalf("Printable(%q) = %q keeps %U", s, p, c)
			}
		}
		if Printable(p) != p {
			t.Fatalf("Printable not idempotent on %q", s)
		}
		// PrintableJSON keeps the value of any JSON text.
		doc, _ := json.Marshal(map[string]string{s: s})
		out := PrintableJSON(doc)
		var a, b map[string]string
		if err := json.Unmarshal(doc, &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out, &b); err != nil || len(a) != len(b) || a[s] != b[s] && utf8.ValidString(s) {
			t.Fatalf("PrintableJSON(%s) = %s (%v)", doc, out, err)
		}
		for _, c := range string(out) {
			if c >= 0x7f && needsEscape(c) || c < 0x20 {
				t.Fatalf("PrintableJSON(%s) keeps %U", doc, c)
			}
		}
	})
}
