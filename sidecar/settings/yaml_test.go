package settings

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestYAMLSameAsJSON(t *testing.T) {
	j, jw, err := Load("testdata/servers.example.json")
	if err != nil {
		t.Fatal(err)
	}
	y, yw, err := Load("testdata/servers.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(y.File, "servers.example.yaml") {
		t.Fatalf("file %s", y.File)
	}
	y.File = j.File
	if !reflect.DeepEqual(j, y) || !reflect.DeepEqual(jw, yw) {
		t.Fatalf("YAML and JSON differ:\n json %+v\n yaml %+v", j, y)
	}
}

// yamlBase is base (settings_test.go) in YAML.
const yamlBase = `name: t
server:
  command: /bin/server
  env: {}
agent:
  slip: slip.json
  book: book.jsonl
  keys: agent.keys
  issuerKeys: [NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs]
executor: {keys: executor.keys, copy: copy.jsonl, copyKey: copy.key}
tools:
  order:
    action: supplies.order
    amount: {unit: GBP, pointer: /total}
`

func editYAML(old, replacement string) string {
	if !strings.Contains(yamlBase, old) {
		panic("no " + old)
	}
	return strings.Replace(yamlBase, old, replacement, 1)
}

func TestYAMLBase(t *testing.T) {
	y, _, err := Parse("/work/x.yaml", []byte(yamlBase))
	if err != nil {
		t.Fatal(err)
	}
	j, _, err := Parse("/work/x.json", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	y.File = j.File
	if !reflect.DeepEqual(j, y) {
		t.Fatalf("YAML and JSON differ:\n json %+v\n yaml %+v", j, y)
	}
	if !IsYAML("a.YML") || !IsYAML("/x/a.yaml") || IsYAML("a.json") || IsYAML("yaml") {
		t.Fatal("IsYAML")
	}
}

func TestYAMLFaults(t *testing.T) {
	for _, c := range []struct {
		name, text, place, reason string
	}{
		{"duplicate top", yamlBase + "name: u\n", "name", "member given twice"},
		{"duplicate deep", editYAML("unit: GBP,", "unit: GBP, unit: EUR,"), "tools.order.amount.unit", "member given twice"},
		{"duplicate quoted alike", editYAML("  keys: agent.keys\n", "  keys: agent.keys\n  'keys': other\n"), "agent.keys", "member given twice"},
		{"duplicate tool", editYAML("tools:\n", "tools:\n  order: {action: a}\n"), "tools.order", "member given twice"},
		{"unknown member", yamlBase + "colour: 1\n", "colour", "not a known member"},
		{"unknown deep", editYAML("copy: copy.jsonl,", "copy: copy.jsonl, cpy: 1,"), "executor.cpy", "not a known member"},
		{"anchor", editYAML("executor: {", "executor: &e {"), "", "anchors and aliases"},
		{"alias", editYAML("  book: book.jsonl", "  book: &b book.jsonl") + "x: *b\n", "", "anchors and aliases"},
		{"merge", editYAML("executor: {keys: executor.keys, copy: copy.jsonl, copyKey: copy.key}", "executor:\n  <<: {keys: executor.keys}\n  copy: copy.jsonl\n  copyKey: copy.key"), "", `"<<" merges`},
		{"number key", yamlBase + "1: x\n", "", "member name must be text"},
		{"bool key", yamlBase + "true: x\n", "", "member name must be text"},
		{"two documents", yamlBase + "---\nname: u\n", "", "a second document"},
		{"empty", "", "", "holds no document"},
		{"comment only", "# nothing\n", "", "holds no document"},
		{"not yaml", "name: [\n", "", "not YAML"},
		{"tab indent", "name: t\nserver:\n\tcommand: x\n", "", "not YAML"},
		{"binary tag", editYAML("name: t", "name: !!binary aGVsbG8="), "", "tag !!binary"},
		{"custom tag", editYAML("name: t", "name: !env NAME"), "", "tag !env"},
		{"infinity", editYAML("name: t\n", "name: t\ntimeout: .inf\n"), "", "not a number JSON can hold"},
		{"int too big", editYAML("name: t\n", "name: t\ntimeout: 99999999999999999999\n"), "timeout", "whole number"},
		{"float where whole", editYAML("name: t\n", "name: t\ntimeout: 1500.5\n"), "timeout", "whole number"},
		{"negative", editYAML("name: t\n", "name: t\nmaxWaiting: -1\n"), "maxWaiting", "whole number"},
		{"bare yes is text", editYAML("name: t\n", "name: t\nhideUnlisted: yes\n"), "hideUnlisted", "must be true or false, not text"},
		{"list at top", "- a\n", "", "must be an object"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := Parse("/work/x.yaml", []byte(c.text))
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("got %v, want *Error", err)
			}
			if se.File != "/work/x.yaml" || se.Place != c.place || !strings.Contains(se.Reason, c.reason) {
				t.Fatalf("got %q (place %q), want place %q and %q", err, se.Place, c.place, c.reason)
			}
		})
	}
}

func TestYAMLScalars(t *testing.T) {
	text := editYAML("name: t\n", "name: t\ntimeout: 0x7d0\nmaxWaiting: 0o20\nhideUnlisted: false\ncontentRules: ~\n")
	_, _, err := Parse("/work/x.yaml", []byte(text))
	// contentRules: null is refused as in JSON.
	var se *Error
	if !errors.As(err, &se) || se.Place != "contentRules" || !strings.Contains(se.Reason, "must be text, not null") {
		t.Fatalf("null: %v", err)
	}
	text = editYAML("name: t\n", "name: t\ntimeout: 0x7d0\nmaxWaiting: 0o20\nhideUnlisted: False\nservice: \"123\"\n")
	s, _, err := Parse("/work/x.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if s.Timeout.Milliseconds() != 2000 || s.MaxWaiting != 16 || s.HideUnlisted || s.Service != "123" {
		t.Fatalf("scalars: timeout %v maxWaiting %d hide %v service %q", s.Timeout, s.MaxWaiting, s.HideUnlisted, s.Service)
	}
}

func FuzzParseYAML(f *testing.F) {
	data, err := os.ReadFile("testdata/servers.example.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(yamlBase))
	f.Add([]byte("a: &x [1]\nb: *x\n"))
	f.Add([]byte("a: 1\na: 2\n"))
	f.Add([]byte("--- 1\n--- 2\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		file := filepath.Join(dir, "fuzz.yaml")
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
		s, _, err := Load(file)
		if err != nil {
			var se *Error
			if !errors.As(err, &se) || se.File != file {
				t.Fatalf("fault is not a settings *Error: %v", err)
			}
			return
		}
		if s.Name == "" || (s.Server.Command == "") == (s.Servers == nil) || s.Tools == nil {
			t.Fatalf("accepted settings out of range: %+v", s)
		}
		checkPolicy(t, s)
	})
}

// TestYAMLNumbersReadAlike: a number YAML 1.1 and 1.2 readers read
// differently is refused, and a float is never taken as a whole number.
func TestYAMLNumbersReadAlike(t *testing.T) {
	for _, c := range []struct{ value, reason string }{
		{"017", "read differently"},   // 1.1: octal 15; 1.2: 17
		{"08", "whole number"},        // read as the float 8 here: not taken as whole
		{"1_000", "read differently"}, // 1.1: 1000; 1.2: text
		{"0b101", "read differently"}, // 1.1 only
		{"0x_1F", "read differently"},
		{"1.0", "whole number"},
		{"1e3", "whole number"},
		{"!!float 1500", "whole number"},
		{".inf", "not a number JSON can hold"},
		{"-.nan", "must be a whole number, not text"}, // text in YAML 1.2
	} {
		t.Run(c.value, func(t *testing.T) {
			_, _, err := Parse("/work/x.yaml", []byte(editYAML("name: t\n", "name: t\nmaxWaiting: "+c.value+"\n")))
			var se *Error
			if !errors.As(err, &se) || !strings.Contains(se.Reason, c.reason) {
				t.Fatalf("maxWaiting: %s: got %v, want %q", c.value, err, c.reason)
			}
		})
	}
	for value, want := range map[string]int{"16": 16, "0x10": 16, "0o20": 16, "+16": 16, `!!int "16"`: 16} {
		s, _, err := Parse("/work/x.yaml", []byte(editYAML("name: t\n", "name: t\nmaxWaiting: "+value+"\n")))
		if err != nil || s.MaxWaiting != want {
			t.Errorf("maxWaiting: %s: %v %v", value, err, s)
		}
	}
}

// TestYAMLVersionDirective: a file that says it is YAML 1.1 would be read
// by a 1.1 reader otherwise (on as true, 017 as 15): any %YAML directive is
// refused. A BOM before YAML is read as nothing; a JSON file with one is
// refused.
func TestYAMLVersionDirective(t *testing.T) {
	for text, want := range map[string]string{
		"%YAML 1.1\n---\n" + yamlBase:            "leave the directive out",
		"\uFEFF%YAML 1.1\n---\n" + yamlBase:      "leave the directive out",
		"# c\n%YAML   1.1 # x\n---\n" + yamlBase: "leave the directive out",
		"%YAML 1.2\n---\n" + yamlBase:            "leave the directive out",
		"\uFEFF" + yamlBase:                      "",
	} {
		_, _, err := Parse("/work/x.yaml", []byte(text))
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("%q: got %v, want %q", text[:20], err, want)
		}
	}
	if _, _, err := Parse("/work/x.json", []byte("\uFEFF"+base)); err == nil {
		t.Error("a JSON settings file with a BOM was read")
	}
}
