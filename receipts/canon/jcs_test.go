package canon

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
)

// TestJCSGolden checks testdata/jcs/NAME.in.json against NAME.out.json
// (the two RFC 8785 examples and a few of our own).
func TestJCSGolden(t *testing.T) {
	ins, err := filepath.Glob("testdata/jcs/*.in.json")
	if err != nil || len(ins) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, in := range ins {
		name := strings.TrimSuffix(filepath.Base(in), ".in.json")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(strings.TrimSuffix(in, ".in.json") + ".out.json")
			if err != nil {
				t.Fatal(err)
			}
			got, err := JCS(raw)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("got  %s\nwant %s", got, want)
			}
			fp, err := JCSFingerprint(raw)
			if err != nil || fp != Fingerprint(want) {
				t.Fatalf("JCSFingerprint = %s, %v", fp, err)
			}
		})
	}
}

func TestJCSRefuses(t *testing.T) {
	for _, c := range []struct{ name, text string }{
		{"empty", ""},
		{"only whitespace", "  "},
		{"nil-like", "null null"},
		{"a repeated name", `{"a":1,"a":2}`},
		{"a repeated name written two ways", `{"a":1,"\u0061":2}`},
		{"a repeated name, deep", `[{"x":{"b":1,"b":1}}]`},
		{"NaN", `NaN`},
		{"Infinity", `[Infinity]`},
		{"-Infinity", `-Infinity`},
		{"a number beyond a double", `1e400`},
		{"a lone high surrogate", `"\ud800"`},
		{"a lone high surrogate before text", `"\ud800x"`},
		{"a lone low surrogate", `{"a":"\udc00"}`},
		{"a lone surrogate in a name", `{"\udc00":1}`},
		{"reversed pair", `"\ude00\ud83d"`},
		{"a high surrogate before an escaped backslash", `"\ud83d\\ude00"`},
		{"a high surrogate before a non-surrogate escape", `"\ud83d\u0041"`},
		{"a lone surrogate in capitals", `["\uD800"]`},
		{"invalid UTF-8", "\"\xff\""},
		{"an encoded surrogate", "\"\xed\xa0\x80\""},
		{"a BOM", "\ufeff{}"},
		{"trailing text", `{} x`},
		{"a raw control character", "\"\x01\""},
		{"a leading zero", `01`},
		{"a trailing comma", `[1,]`},
		{"single quotes", `'a'`},
		{"a value 65 deep", strings.Repeat("[", 65) + "1" + strings.Repeat("]", 65)},
		{"an object holding something at depth 65", strings.Repeat("[", 64) + `{"a":1}` + strings.Repeat("]", 64)},
		{"an empty list 66 deep", strings.Repeat("[", 66) + strings.Repeat("]", 66)},
		{"far too deep", strings.Repeat("[", 100000)},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := JCS([]byte(c.text))
			if problem.Code(err) != CodeBadField {
				t.Fatalf("got %q, %v; want code %s", out, err, CodeBadField)
			}
		})
	}
}

func TestJCSAccepts(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"a string 64 deep", strings.Repeat("[", 64) + `"x"` + strings.Repeat("]", 64), strings.Repeat("[", 64) + `"x"` + strings.Repeat("]", 64)},
		{"an empty object at depth 65", strings.Repeat("[", 64) + ` { } ` + strings.Repeat("]", 64), strings.Repeat("[", 64) + `{}` + strings.Repeat("]", 64)},
		{"brackets inside strings do not count", `"` + strings.Repeat("[", 100) + `"`, `"` + strings.Repeat("[", 100) + `"`},
		{"escaped quote then brackets", `["\"[[[["]`, `["\"[[[["]`},
		{"a surrogate pair as escapes", `"\ud83d\ude00"`, "\"\U0001F600\""},
		{"a surrogate pair in capitals", `["\uD83D\uDE00",1]`, "[\"\U0001F600\",1]"},
		{"an escaped backslash then u", `"\\ud800"`, `"\\ud800"`},
		{"a solidus escaped", `"\/"`, `"/"`},
		{"a top-level number", ` 1.50 `, `1.5`},
		{"minus zero", `-0.0`, `0`},
		{"null", `null`, `null`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := JCS([]byte(c.text))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Fatalf("got %s, want %s", got, c.want)
			}
		})
	}
}

// TestJCSErrorsHoldNoInput: a refusal's message never repeats the text
// (it may be a tool's arguments).
func TestJCSErrorsHoldNoInput(t *testing.T) {
	for _, text := range []string{`{"secret-value":1,"secret-value":2}`, `[secret-value]`, `"\usecr"`, `{"a":secret-value}`} {
		_, err := JCS([]byte(text))
		if err == nil {
			t.Fatalf("%s accepted", text)
		}
		if strings.Contains(err.Error(), "secr") {
			t.Fatalf("message holds the input: %v", err)
		}
	}
}

// FuzzJCS: JCS either refuses with "bad-field" or gives valid JSON that
// it gives back unchanged; where it accepts, encoding/json agrees the
// text is JSON.
func FuzzJCS(f *testing.F) {
	for _, s := range []string{
		`{"b":[1,2.5,0,true,null,"x"],"a":{"d":"é","c":1e21}}`, `-0`, `NaN`, `"\ud800"`, `{"a":1,"a":2}`,
		`[1e-7, 123456789012345680000, 5e-324]`, `"\u2028"`, `{"` + "\U0001F600" + `":1,"` + "\uffff" + `":2}`,
		strings.Repeat("[", 65) + strings.Repeat("]", 65), `  {"a" : [ ] }  `, `1E400`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		out, err := JCS(raw)
		if err != nil {
			if problem.Code(err) != CodeBadField {
				t.Fatalf("refused with code %q: %v", problem.Code(err), err)
			}
			return
		}
		if !json.Valid(raw) {
			t.Fatalf("JCS accepted %q, which encoding/json says is not JSON", raw)
		}
		again, err := JCS(out)
		if err != nil {
			t.Fatalf("JCS refuses its own output %q: %v", out, err)
		}
		if !bytes.Equal(again, out) {
			t.Fatalf("JCS not stable: %q then %q", out, again)
		}
	})
}

func BenchmarkJCS(b *testing.B) {
	raw := []byte(`{"b":[1,2.5,0,true,null,"x",1e21,5e-324],"a":{"d":"\u00e9\ud83d\ude00","c":"line\nfeed"},` +
		`"items":[{"sku":"A-1","qty":3,"price":4.35},{"sku":"B-2","qty":1,"price":100}],"note":"` +
		strings.Repeat("paper ", 50) + `"}`)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := JCS(raw); err != nil {
			b.Fatal(err)
		}
	}
}
