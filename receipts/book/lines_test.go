package book

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
)

// TestLineCodes pins the code a bad line gets: "not-json" only for text the
// reference's JSON.parse refuses, "line-not-canonical" for JSON that is not
// canonical. JSON.parse has no nesting limit (the reference's own test
// nests 200,000 lists), so JSON nested past encoding/json's 10,000 levels
// is still JSON.
func TestLineCodes(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	cases := []struct {
		name, line, code string
	}{
		{"not JSON", "hello", "not-json"},
		{"cut short", `{"a":1`, "not-json"},
		{"members out of order", `{"b":1,"a":2}`, "line-not-canonical"},
		{"a space", `{"a": 1}`, "line-not-canonical"},
		{"nine levels", deep(9), "line-not-canonical"},
		{"10,001 levels", deep(10001), "line-not-canonical"},
		{"65,536 levels", deep(65536), "line-not-canonical"},
		{"65,536 levels unclosed", strings.Repeat("[", 65536), "not-json"},
		{"deep, then not JSON", deep(20000) + "x", "not-json"},
		{"a bad escape", `{"a":"\x"}`, "not-json"},
		{"a lone surrogate", `{"a":"\ud800"}`, "line-not-canonical"},
		{"a fraction", `{"a":1.5}`, "line-not-canonical"},
		{"a bad number", `{"a":01}`, "not-json"},
		{"a bad exponent", `{"a":1e}`, "not-json"},
		{"a control character", "{\"a\":\"\x01\"}", "not-json"},
		{"true", `true`, "line-not-canonical"},
		{"trailing comma", `[1,]`, "not-json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := readLineValue([]byte(c.line))
			if got := problem.Code(err); got != c.code {
				t.Errorf("code %q, want %q (%v)", got, c.code, err)
			}
		})
	}
}

// FuzzIsJSON compares isJSON with encoding/json, which agrees with
// JSON.parse on syntax below its nesting limit.
func FuzzIsJSON(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[1,2,{"b":null}]}`, ` [ 1 , -0.5e+3 ] `, `{"a":}`, `[1,]`, `"\u00zz"`, `01`, `-`, `1.`, `{"a" 1}`, `[{]}`, "\"\xff\"", `tru`, `[1]]`, `{"a":1,}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := isJSON(b), json.Valid(b); got != want {
			t.Errorf("isJSON(%q) = %v, encoding/json says %v", b, got, want)
		}
	})
}

// TestOpenBookDeepLastLineIsNotTorn: a last line without a line feed that
// is whole JSON, however deep, is read as an entry (with its problem), not
// taken for a torn write.
func TestOpenBookDeepLastLineIsNotTorn(t *testing.T) {
	f := newFixture(t, nil)
	n := 10001
	text := append(lineBytes(t, f.slipLine()), strings.Repeat("[", n)+strings.Repeat("]", n)...)
	path := filepath.Join(t.TempDir(), "book.jsonl")
	if err := os.WriteFile(path, text, 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := OpenBook(path, f.opts)
	if err != nil {
		t.Fatalf("OpenBook: %v; want the deep line read as an entry", err)
	}
	defer b.Close()
	if err := b.Ledger().Sound(); err == nil || !strings.Contains(err.Error(), "line 2 of the book has a problem: line-not-canonical") {
		t.Fatalf("Sound() = %v; want line-not-canonical", err)
	}
}
