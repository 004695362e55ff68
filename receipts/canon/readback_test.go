package canon

import (
	"reflect"
	"strings"
	"testing"
)

// TestReadBack: ReadBack gives what reading the written text back (Parse
// of Marshal, the old way) gives, for every kind of value Marshal writes,
// and shares no object or list with what it was given.
func TestReadBack(t *testing.T) {
	inner := map[string]any{"k": "v"}
	list := []any{"a", int64(1), inner}
	for _, v := range []any{
		"text", "é\u2028\U0001F600", int64(0), int64(MaxSafeInt), 7, int32(8), uint32(9), uint64(10),
		[]any{}, map[string]any{}, []string{"x", "y"}, map[string]string{"b": "2", "a": "1"},
		map[string]any{"type": "provared.stub.v0", "seq": int64(3), "details": []any{map[string]any{"name": "n", "sha256": "s"}},
			"amount": map[string]any{"unit": "GBP", "value": 12}, "list": list, "strs": []string{"p"}},
		[]any{[]any{[]any{[]any{[]any{[]any{[]any{"deep"}}}}}}},
	} {
		text, err := Marshal(v)
		if err != nil {
			t.Fatalf("%v: %v", v, err)
		}
		want, err := Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		if got := ReadBack(v); !reflect.DeepEqual(got, want) {
			t.Fatalf("ReadBack(%#v) = %#v, want %#v", v, got, want)
		}
	}
	got := ReadBack(map[string]any{"list": list}).(map[string]any)
	got["list"].([]any)[2].(map[string]any)["k"] = "changed"
	got["list"].([]any)[0] = "changed"
	if inner["k"] != "v" || list[0] != "a" {
		t.Fatal("the value read back shares an object or a list with the one given")
	}
}

// TestReadBackPanics: a value Marshal does not write is a caller's mistake.
func TestReadBackPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("ReadBack took a float")
		}
	}()
	ReadBack(map[string]any{"x": 1.5})
}

// FuzzReadBack: for any value Parse reads (and the same value with its
// texts' lists and objects written as []string and map[string]string, and
// its numbers as int), ReadBack of it is what Parse of its Marshal gives.
func FuzzReadBack(f *testing.F) {
	f.Add([]byte(`{"a":[1,"x",{"b":"c"}],"d":{"e":"f"},"g":["h","i"]}`))
	f.Add([]byte(`[[],{},"",0,9007199254740991]`))
	f.Fuzz(func(t *testing.T, text []byte) {
		v, err := Parse(text)
		if err != nil {
			return
		}
		for _, w := range []any{v, retyped(v)} {
			out, err := Marshal(w)
			if err != nil {
				t.Fatalf("Marshal of a value Parse read: %v", err)
			}
			want, err := Parse(out)
			if err != nil {
				t.Fatal(err)
			}
			if got := ReadBack(w); !reflect.DeepEqual(got, want) {
				t.Fatalf("ReadBack: %#v, want %#v", got, want)
			}
		}
	})
}

// retyped writes v's lists and objects of texts as []string and
// map[string]string and its numbers as int, which Marshal also takes.
func retyped(v any) any {
	switch x := v.(type) {
	case int64:
		return int(x)
	case []any:
		strs := make([]string, 0, len(x))
		out := make([]any, len(x))
		for i, e := range x {
			if s, ok := e.(string); ok {
				strs = append(strs, s)
			}
			out[i] = retyped(e)
		}
		if len(strs) == len(x) && len(x) > 0 {
			return strs
		}
		return out
	case map[string]any:
		strs := map[string]string{}
		out := map[string]any{}
		for k, e := range x {
			if s, ok := e.(string); ok {
				strs[k] = s
			}
			out[k] = retyped(e)
		}
		if len(strs) == len(x) && len(x) > 0 {
			return strs
		}
		return out
	}
	return v
}

// TestMarshalOwnsItsText: a text Marshal gives is its caller's alone: the
// next Marshal, which writes in the same scratch buffer, changes nothing
// in it; and it is exactly as long as its content.
func TestMarshalOwnsItsText(t *testing.T) {
	first, err := Marshal(map[string]any{"a": "first"})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := Marshal(map[string]any{"a": "second, which is longer than the first"}); err != nil {
			t.Fatal(err)
		}
	}
	if string(first) != `{"a":"first"}` || cap(first) != len(first) {
		t.Fatalf("the first text is now %q (cap %d)", first, cap(first))
	}
	if _, err := Marshal(map[string]any{"a": 1.5}); err == nil {
		t.Fatal("a float was written")
	}
	big := map[string]any{"a": strings.Repeat("x", maxScratch+1)}
	if b, err := Marshal(big); err != nil || len(b) != maxScratch+1+len(`{"a":""}`) {
		t.Fatalf("a text longer than the scratch kept: %d bytes, %v", len(b), err)
	}
}
