package wire

import (
	"testing"
)

func TestFilterTools(t *testing.T) {
	result := []byte(`{ "tools" : [ {"name":"a","inputSchema":{"maximum":9007199254740991,"x":1.10}},
  {"name":"b","n":1E5} ,{"name":"c","d":-0.0},{"noname":1},{"name":5} ] , "nextCursor":"q"}`)
	keepNames := func(names ...string) func(string) bool {
		return func(n string) bool {
			for _, x := range names {
				if x == n {
					return true
				}
			}
			return false
		}
	}
	cases := []struct {
		keep []string
		want string
	}{
		{[]string{"a", "c"}, `{ "tools" : [ {"name":"a","inputSchema":{"maximum":9007199254740991,"x":1.10}},{"name":"c","d":-0.0} ] , "nextCursor":"q"}`},
		{[]string{"b"}, `{ "tools" : [
  {"name":"b","n":1E5} ] , "nextCursor":"q"}`},
		{nil, `{ "tools" : [ ] , "nextCursor":"q"}`},
	}
	for _, c := range cases {
		got, err := FilterTools(result, keepNames(c.keep...))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.want {
			t.Errorf("keep %v:\n got  %s\n want %s", c.keep, got, c.want)
		}
		if _, err := Inspect(ResultLine([]byte("1"), got)); err != nil {
			t.Errorf("keep %v: not valid: %v", c.keep, err)
		}
	}
	// Nothing removed: the bytes are the same.
	all := []byte(`{"tools":[{"name":"a"} , {"name":"b"}]}`)
	got, err := FilterTools(all, func(string) bool { return true })
	if err != nil || string(got) != string(all) {
		t.Errorf("keep all: %s %v", got, err)
	}
	for _, bad := range []string{`[]`, `{"tools":{}}`, `{"x":[]}`, `{"tools":[`} {
		if _, err := FilterTools([]byte(bad), func(string) bool { return true }); err == nil {
			t.Errorf("FilterTools(%s) accepted", bad)
		}
	}
}

// FilterTools fails closed on a result it cannot read exactly: the hidden
// tool must never come through.
func TestFilterToolsFailsClosed(t *testing.T) {
	keep := func(n string) bool { return n == "shown" }
	cases := []struct{ name, result string }{
		{"number beyond 2^53-1", `{"tools":[{"name":"shown"},{"name":"hidden","n":9007199254740993}]}`},
		{"duplicate member", `{"tools":[{"name":"shown"},{"name":"hidden","x":1,"x":2}]}`},
		{"duplicate name", `{"tools":[{"name":"hidden","name":"shown"}]}`},
		{"name and NAME", `{"tools":[{"name":"shown","NAME":"hidden"}]}`},
		{"NAME alone", `{"tools":[{"name":"shown"},{"NAME":"hidden"}]}`},
		{"Name", `{"tools":[{"name":"shown"},{"Name":"hidden"}]}`},
		{"tools twice by case", `{"tools":[{"name":"shown"}],"TOOLS":[{"name":"hidden"}]}`},
		{"not utf-8", "{\"tools\":[{\"name\":\"shown\"},{\"name\":\"hidden\xff\"}]}"},
		{"half a result", `{"tools":[{"name":"shown"},{"name":"hid`},
	}
	for _, c := range cases {
		got, err := FilterTools([]byte(c.result), keep)
		if err == nil {
			t.Errorf("%s: FilterTools passed %s", c.name, got)
		}
	}
}
