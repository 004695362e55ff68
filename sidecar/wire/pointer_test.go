package wire

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestPointer(t *testing.T) {
	doc := []byte(` {"total": 12, "items":[{"q":1},{"q":2}], "a/b":{"m~n":true}, "":"empty", "n":null} `)
	cases := []struct {
		ptr   string
		want  string
		found bool
	}{
		{"", `{"total": 12, "items":[{"q":1},{"q":2}], "a/b":{"m~n":true}, "":"empty", "n":null}`, true},
		{"/total", `12`, true},
		{"/items/1/q", `2`, true},
		{"/items/1", `{"q":2}`, true},
		{"/items/2", ``, false},
		{"/items/-", ``, false},
		{"/items/01", ``, false},
		{"/items/x", ``, false},
		{"/a~1b/m~0n", `true`, true},
		{"/", `"empty"`, true},
		{"/n", `null`, true},
		{"/missing", ``, false},
		{"/total/x", ``, false},
	}
	for _, c := range cases {
		got, found, err := Pointer(doc, c.ptr)
		if err != nil || found != c.found || string(got) != c.want {
			t.Errorf("Pointer(%q) = %q %v %v; want %q %v", c.ptr, got, found, err, c.want, c.found)
		}
	}
	for _, bad := range []string{"total", "/a~2", "/a~"} {
		if _, _, err := Pointer(doc, bad); !errors.Is(err, ErrBadPointer) {
			t.Errorf("Pointer(%q) err = %v", bad, err)
		}
	}
	if _, _, err := Pointer([]byte(`{"a":`), "/a"); err == nil {
		t.Error("broken JSON accepted")
	}
}

func TestPointerTokens(t *testing.T) {
	for _, c := range []struct {
		ptr  string
		want []string
	}{
		{"", nil},
		{"/", []string{""}},
		{"/a~1b/m~0n", []string{"a/b", "m~n"}},
		{"/~01", []string{"~1"}},
		{"/items/0/", []string{"items", "0", ""}},
	} {
		got, err := PointerTokens(c.ptr)
		if err != nil || fmt.Sprintf("%q", got) != fmt.Sprintf("%q", c.want) || (got == nil) != (c.want == nil) {
			t.Errorf("PointerTokens(%q) = %q, %v; want %q", c.ptr, got, err, c.want)
		}
	}
	for _, bad := range []string{"total", "/a~2", "/a~"} {
		if got, err := PointerTokens(bad); !errors.Is(err, ErrBadPointer) || got != nil {
			t.Errorf("PointerTokens(%q) = %q, %v; want ErrBadPointer", bad, got, err)
		}
	}
}

func TestArrayIndex(t *testing.T) {
	for tok, want := range map[string]int{"0": 0, "7": 7, "10": 10, "999999999": 999999999} {
		if got, ok := ArrayIndex(tok); !ok || got != want {
			t.Errorf("ArrayIndex(%q) = %d, %v; want %d", tok, got, ok, want)
		}
	}
	for _, tok := range []string{"", "-", "01", "00", "1a", "+1", " 1", "1000000000"} {
		if got, ok := ArrayIndex(tok); ok {
			t.Errorf("ArrayIndex(%q) = %d; want no index", tok, got)
		}
	}
}

func TestWholeNumber(t *testing.T) {
	ok := map[string]int64{
		"0": 0, "7": 7, " 42 ": 42, "9007199254740991": MaxSafeInt, "2.0": 2, "5e2": 500, "1.50e1": 15,
		"0.0": 0, "0e10": 0, "123456789e-4": 0, // replaced below
	}
	delete(ok, "123456789e-4")
	ok["1234500e-2"] = 12345
	for in, want := range ok {
		got, err := WholeNumber([]byte(in))
		if err != nil || got != want {
			t.Errorf("WholeNumber(%s) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"-1", "-0", "1.5", "1e-1", "9007199254740992", "1e16", `"5"`, "true", "null", "[1]", "", "1 2"} {
		if got, err := WholeNumber([]byte(in)); err == nil {
			t.Errorf("WholeNumber(%s) = %d; want an error", in, got)
		}
	}
}

func TestListLength(t *testing.T) {
	for in, want := range map[string]int{`[]`: 0, `[ ]`: 0, `[1]`: 1, `[1,[2,3],{"a":[]}]`: 3} {
		if got, err := ListLength([]byte(in)); err != nil || got != want {
			t.Errorf("ListLength(%s) = %d, %v", in, got, err)
		}
	}
	for _, in := range []string{`{}`, `"[]"`, `[1,`} {
		if _, err := ListLength([]byte(in)); err == nil {
			t.Errorf("ListLength(%s) accepted", in)
		}
	}
}

func TestFoldedDuplicate(t *testing.T) {
	cases := []struct {
		in, path string
		found    bool
	}{
		{`{"total":1,"TOTAL":2}`, "/TOTAL", true},
		{`{"a":{"x":1},"b":[{"k":1,"K":2}]}`, "/b/0/K", true},
		{`{"ſ":1,"S":2}`, "/S", true},      // U+017F folds to s and S
		{`{"\u212a":1,"k":2}`, "/k", true}, // Kelvin sign U+212A folds to k
		{`{"a":1,"b":{"a":2}}`, "", false},
		{`{"ab":1,"a\u0042":2}`, "/aB", true},
		{`[1,"x",{"a/b":{"q":1,"Q":1}}]`, "/2/a~1b/Q", true},
		{`{"total":1}`, "", false},
		{`not json`, "", false},
	}
	for _, c := range cases {
		path, found := FoldedDuplicate([]byte(c.in))
		if found != c.found || path != c.path {
			t.Errorf("FoldedDuplicate(%s) = %q %v; want %q %v", c.in, path, found, c.path, c.found)
		}
	}
	// Many members take the map path.
	many := []byte(`{`)
	for i := 0; i < 40; i++ {
		many = append(many, `"m`...)
		many = append(many, byte('a'+i%26), byte('a'+i/26))
		many = append(many, `":1,`...)
	}
	many = append(many, `"MA B":1,"mz":2,"MAB":3}`...)
	if path, found := FoldedDuplicate(many); !found || path != "/MAB" {
		t.Errorf("many members: %q %v", path, found)
	}
}

func TestFoldKeyAgreesWithEqualFold(t *testing.T) {
	words := []string{"k", "K", "\u212a", "s", "S", "\u017f", "ß", "ẞ", "σ", "Σ", "ς", "Ǆ", "ǅ", "ǆ", "a", "İ", "i", "ı"}
	for _, a := range words {
		for _, b := range words {
			if (FoldKey(a) == FoldKey(b)) != strings.EqualFold(a, b) {
				t.Errorf("FoldKey disagrees with EqualFold on %q %q", a, b)
			}
		}
	}
}
