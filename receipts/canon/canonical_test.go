package canon

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
)

func TestParseRefuses(t *testing.T) {
	for _, c := range []struct{ name, text string }{
		{"invalid UTF-8", "\"\xff\""},
		{"an encoded surrogate", "\"\xed\xa0\x80\""},
		{"a raw control character", "\"a\x01\""},
		{"a raw line feed", "\"a\nb\""},
		{"a newline escaped the long way", `"\u000a"`},
		{"a tab escaped the long way", `"\u0009"`},
		{"backspace escaped the long way", `"\u0008"`},
		{"DEL escaped", `"\u007f"`},
		{"U+2028 escaped", `"\u2028"`},
		{"a quote escaped the long way", `"\u0022"`},
		{"an unknown escape", `"\x"`},
		{"a short \\u escape", `"\u00"`},
		{"a lone low surrogate", `"\udc00"`},
		{"a high surrogate then text", `"\ud800a"`},
		{"a leading zero", `01`},
		{"a plus sign", `+1`},
		{"a number with a point at the end", `1.`},
		{"false", `false`},
		{"a word that is not a literal", `nope`},
		{"an unclosed object", `{"a":1`},
		{"an unclosed array", `[1`},
		{"an unclosed string", `"abc`},
		{"a trailing comma in an array", `[1,]`},
		{"a trailing comma in an object", `{"a":1,}`},
		{"a name that is not a string", `{a:1}`},
		{"a missing colon", `{"a"1}`},
		{"a space after a colon", `{"a": 1}`},
		{"a space after a comma", `[1, 2]`},
		{"a leading space", ` 1`},
		{"a trailing newline", "{}\n"},
		{"two values", `1 2`},
		{"an object 9 deep", strings.Repeat(`{"a":`, 9) + "1" + strings.Repeat("}", 9)},
		{"mixed nesting 9 deep", `[{"a":[{"a":[{"a":[{"a":[1]}]}]}]}]`},
		{"a repeated name after others", `{"a":1,"b":2,"b":3}`},
		{"names by code point, deeper", `{"x":{"` + "\uffff" + `":1,"` + "\U0001F600" + `":2}}`},
		{"a number one past the largest, 17 digits", `10000000000000000`},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, err := Parse([]byte(c.text))
			if problem.Code(err) != CodeNotCanonical {
				t.Fatalf("got %#v, %v; want code %s", v, err, CodeNotCanonical)
			}
		})
	}
}

func TestParseAccepts(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       any
	}{
		{"zero", `0`, int64(0)},
		{"an empty object", `{}`, map[string]any{}},
		{"an empty array", `[]`, []any{}},
		{"an empty string", `""`, ""},
		{"every short escape", `"\"\\\b\f\n\r\t"`, "\"\\\b\f\n\r\t"},
		{"NUL", `"\u0000"`, "\x00"},
		{"unit separator", `"\u001f"`, "\x1f"},
		{"a solidus as itself", `"/"`, "/"},
		{"HTML characters as themselves", `"<>&"`, "<>&"},
		{"a mixture", `{"a":[{"b":""}],"c":"\u0007x"}`, map[string]any{"a": []any{map[string]any{"b": ""}}, "c": "\ax"}},
		{"an empty name", `{"":1,"a":2}`, map[string]any{"": int64(1), "a": int64(2)}},
		{"a prefix sorts first", `{"a":1,"ab":2}`, map[string]any{"a": int64(1), "ab": int64(2)}},
		{"an object 8 deep", strings.Repeat(`{"a":`, 7) + "{}" + strings.Repeat("}", 7),
			nest(7, map[string]any{})},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Parse([]byte(c.text))
			if err != nil {
				t.Fatal(err)
			}
			b := MustMarshal(got)
			if string(b) != c.text {
				t.Fatalf("Marshal gives %q, want %q", b, c.text)
			}
			if !bytes.Equal(MustMarshal(c.want), b) {
				t.Fatalf("value differs from %#v", c.want)
			}
		})
	}
}

func nest(n int, leaf any) any {
	for range n {
		leaf = map[string]any{"a": leaf}
	}
	return leaf
}

func TestMarshal(t *testing.T) {
	for _, c := range []struct {
		name string
		v    any
		want string
	}{
		{"int", 5, `5`},
		{"int32", int32(7), `7`},
		{"uint32", uint32(8), `8`},
		{"uint64 largest", uint64(MaxSafeInt), `9007199254740991`},
		{"int64 largest", int64(MaxSafeInt), `9007199254740991`},
		{"strings", []string{"b", "a"}, `["b","a"]`},
		{"string map", map[string]string{"b": "1", "a": "2"}, `{"a":"2","b":"1"}`},
		{"UTF-16 order", map[string]any{"\uffff": 1, "\U0001F600": 2}, `{"` + "\U0001F600" + `":2,"` + "\uffff" + `":1}`},
		{"U+2028, DEL and HTML literal", "\u2028\u2029\x7f<>&/", "\"\u2028\u2029\x7f<>&/\""},
		{"controls", "\x00\x1f\x0b", `"\u0000\u001f\u000b"`},
		{"depth 8", nest(7, []any{}), strings.Repeat(`{"a":`, 7) + "[]" + strings.Repeat("}", 7)},
		{"nil slice", []any(nil), `[]`},
		{"nil map", map[string]any(nil), `{}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Marshal(c.v)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Fatalf("got %s, want %s", got, c.want)
			}
		})
	}
}

func TestMarshalRefuses(t *testing.T) {
	for _, c := range []struct {
		name string
		v    any
	}{
		{"nil", nil},
		{"bool", true},
		{"float", 1.5},
		{"negative", -1},
		{"negative int64", int64(-5)},
		{"too large", int64(MaxSafeInt + 1)},
		{"too large uint64", uint64(1 << 60)},
		{"invalid UTF-8", "\xff"},
		{"invalid UTF-8 name", map[string]any{"\xff": 1}},
		{"invalid UTF-8 in a list of strings", []string{"\xc3"}},
		{"depth 9", nest(8, []any{})},
		{"a struct", struct{}{}},
		{"nested bad value", map[string]any{"a": []any{1, nil}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := Marshal(c.v)
			if problem.Code(err) != CodeNotCanonical {
				t.Fatalf("got %q, %v; want code %s", b, err, CodeNotCanonical)
			}
		})
	}
}

func TestMustMarshalPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	MustMarshal(1.5)
}

func TestUTF16Less(t *testing.T) {
	for _, c := range []struct {
		a, b string
		less bool
	}{
		{"a", "b", true},
		{"b", "a", false},
		{"a", "a", false},
		{"", "a", true},
		{"a", "ab", true},
		{"\U0001F600", "\uffff", true}, // D83D < FFFF
		{"\uffff", "\U0001F600", false},
		{"\ue000", "\U0001F600", false}, // E000 > D83D
		{"\U0001F600", "\U0001F601", true},
		{"\U0001F600", "\U00020000", true}, // D83D < D840
		{"é", "z", false},
		{"10", "2", true},
	} {
		if got := UTF16Less(c.a, c.b); got != c.less {
			t.Errorf("UTF16Less(%q, %q) = %v, want %v", c.a, c.b, got, c.less)
		}
	}
}

// FuzzParse: whatever Parse accepts, Marshal writes back byte for byte;
// whatever it refuses carries the canonical code.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"b":[2,"x"]}`, `{"b":1,"a":2}`, `{"a": 1}`, `{"a":1,"a":1}`, `{"a":1.5}`, `-0`,
		`9007199254740991`, `9007199254740992`, `"\ud800"`, `"\ud83d\ude00"`, `"\u0001"`, `"\u001F"`,
		`"\/"`, "\"\u2028\"", `[[[[[[[[1]]]]]]]]`, `[[[[[[[[[1]]]]]]]]]`, "\ufeff{}", `{} `, `""`, `true`,
		`{"` + "\U0001F600" + `":1,"` + "\uffff" + `":2}`, `"\b\f\n\r\t\"\\"`, `"\u0008"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		v, err := Parse(text)
		if err != nil {
			if problem.Code(err) != CodeNotCanonical {
				t.Fatalf("refused with code %q: %v", problem.Code(err), err)
			}
			// Nothing canonical may be refused: if encoding/json reads a
			// value that writes back as exactly this text, Parse is wrong.
			if other, ok := decodeWithStdlib(text); ok {
				if out, err := Marshal(other); err == nil && bytes.Equal(out, text) {
					t.Fatalf("Parse refused canonical text %q: %v", text, err)
				}
			}
			return
		}
		out, err := Marshal(v)
		if err != nil {
			t.Fatalf("Marshal of a parsed value: %v", err)
		}
		if !bytes.Equal(out, text) {
			t.Fatalf("Parse accepted %q but Marshal gives %q", text, out)
		}
	})
}

// decodeWithStdlib reads text with encoding/json, numbers as int64 where
// they are whole, as an independent reading for FuzzParse.
func decodeWithStdlib(text []byte) (any, bool) {
	d := json.NewDecoder(bytes.NewReader(text))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil || d.More() {
		return nil, false
	}
	var conv func(any) (any, bool)
	conv = func(v any) (any, bool) {
		switch x := v.(type) {
		case json.Number:
			n, err := x.Int64()
			return n, err == nil
		case []any:
			for i := range x {
				var ok bool
				if x[i], ok = conv(x[i]); !ok {
					return nil, false
				}
			}
		case map[string]any:
			for k := range x {
				var ok bool
				if x[k], ok = conv(x[k]); !ok {
					return nil, false
				}
			}
		}
		return v, true
	}
	return conv(v)
}

func BenchmarkParse(b *testing.B) {
	text := MustMarshal(map[string]any{
		"type":    "provared.stub.v0",
		"slip":    Fingerprint([]byte("slip")),
		"after":   Fingerprint([]byte("after")),
		"action":  "supplies.order",
		"amount":  map[string]any{"unit": "GBP", "value": 150},
		"details": []any{map[string]any{"name": "arguments", "sha256": Fingerprint(nil)}},
		"note":    "line\nfeed \"quoted\" é \u2028 \U0001F600",
		"when":    "2026-10-05T09:00:00Z",
		"id":      NewID(),
	})
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(text); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMarshal(b *testing.B) {
	v, err := Parse(MustMarshal(map[string]any{"a": []any{1, 2, "x"}, "b": map[string]any{"c": "é\n"}}))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Marshal(v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseLongStrings: a line of the size of a book's stub line,
// nearly all of it base64url text (payloads and signatures).
func BenchmarkParseLongStrings(b *testing.B) {
	sig := B64(bytes.Repeat([]byte{0xA5, 0x3C, 0x7E}, 1550))
	env := func() map[string]any {
		return map[string]any{"payload": B64(bytes.Repeat([]byte("x"), 700)), "signatures": []any{
			map[string]any{"protected": "eyJhbGciOiJFZDI1NTE5In0", "signature": B64(make([]byte, 64))},
			map[string]any{"protected": "eyJhbGciOiJNTC1EU0EtODcifQ", "signature": sig},
		}}
	}
	text := MustMarshal(map[string]any{"countersignature": env(), "stub": env()})
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(text); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPlainRun: the eight-bytes-at-a-time scan stops at the block that
// holds each byte a string cannot hold as it is, at every place in it.
func TestPlainRun(t *testing.T) {
	for _, c := range []byte{'"', '\\', 0x00, 0x1f, '\n'} {
		for at := range 24 {
			text := bytes.Repeat([]byte{'a', 0xC3, 0xA9, 0x7F, 0x20, 0x21, 0x5B, 0x5D}, 3)
			text[at] = c
			if got := plainRun(text, 0); got > at || got+8 <= at {
				t.Errorf("%#x at %d: stops at %d", c, at, got)
			}
		}
	}
	plain := bytes.Repeat([]byte{'a', 0xC3, 0xA9, 0x7F, 0x20, 0x21, 0x5B, 0x5D}, 3)
	if got := plainRun(plain, 0); got != 24 {
		t.Errorf("plain text: stops at %d", got)
	}
}
