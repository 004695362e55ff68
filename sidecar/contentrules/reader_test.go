package contentrules

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
)

// rule wraps rule objects into a rules file.
func file(rules ...string) string {
	return `{"version":1,"rules":[` + strings.Join(rules, ",") + `]}`
}

const okRule = `{"name":"r","tool":"t","test":{"pointer":"/a","equals":1}}`

func TestParseFaults(t *testing.T) {
	long := strings.Repeat("é", 201)
	for _, c := range []struct {
		name, text, place, reason string
	}{
		{"empty", ``, "", "not JSON"},
		{"a BOM", "\ufeff" + file(okRule), "", "not JSON"},
		{"not UTF-8", file(`{"name":"r` + "\xff" + `","tool":"t"}`), "", "byte 32 is not part of a UTF-8 character"},
		{"trailing text", file(okRule) + "x", "", "not JSON"},
		{"a list at the top", `[]`, "", "one JSON object"},
		{"a repeated member at the top", `{"version":1,"version":1,"rules":[]}`, "", `"version" is named twice`},
		{"a repeated member in a rule", file(`{"name":"r","name":"s","tool":"t"}`), "rules[0]", `"name" is named twice`},
		{"a repeated member in a condition", file(`{"name":"r","tool":"t","test":[{"pointer":"/a","pointer":"/b","absent":true}]}`), "rules[0].test[0]", `"pointer" is named twice`},
		{"a repeated member inside equals", file(`{"name":"r","tool":"t","test":{"pointer":"","equals":{"x":1,"x":2}}}`), "rules[0].test.equals", `"x" is named twice`},
		{"a big number", file(`{"name":"r","tool":"t","test":{"pointer":"/a","equals":9007199254740992}}`), "rules[0].test.equals", "beyond 9,007,199,254,740,991"},
		{"a big number written as a fraction", file(`{"name":"r","tool":"t","test":{"pointer":"/a","oneOf":[1,1e300]}}`), "rules[0].test.oneOf[1]", "beyond"},
		{"a lone surrogate", file(`{"name":"\ud800","tool":"t"}`), "rules[0].name", "lone surrogate"},
		{"no version", `{"rules":[]}`, "version", "missing"},
		{"version 2", `{"version":2,"rules":[]}`, "version", "must be 1"},
		{"version as text", `{"version":"1","rules":[]}`, "version", "must be 1"},
		{"no rules", `{"version":1}`, "rules", "missing"},
		{"rules not a list", `{"version":1,"rules":{}}`, "rules", "list"},
		{"an unknown member at the top", `{"version":1,"rules":[],"comment":"x"}`, "", `"comment" is not a member of a rules file`},
		{"an unknown member in a rule", file(`{"name":"r","tool":"t","tools":"u"}`), "rules[0]", `"tools" is not a member of a rule`},
		{"an unknown member in a condition", file(`{"name":"r","tool":"t","when":{"pointer":"/a","absent":true,"not":true}}`), "rules[0].when", `"not" is not a member of a condition`},
		{"an unknown member in content", file(`{"name":"r","tool":"t","content":{"pointer":"/c","as":"json","encoding":"utf8"}}`), "rules[0].content", `"encoding" is not a member of content`},
		{"a rule not an object", file(`"r"`), "rules[0]", "must be an object"},
		{"no name", file(`{"tool":"t"}`), "rules[0].name", "1 to 200"},
		{"an empty name", file(`{"name":"","tool":"t"}`), "rules[0].name", "1 to 200"},
		{"a name of 201 characters", file(`{"name":"` + long + `","tool":"t"}`), "rules[0].name", "not 201"},
		{"a name used twice", file(okRule, `{"name":"s","tool":"t"}`, okRule), "rules[2].name", "rules[0]"},
		{"no tool", file(`{"name":"r"}`), "rules[0].tool", "missing"},
		{"a tool name with a space", file(`{"name":"r","tool":"a b"}`), "rules[0].tool", "tool's name"},
		{"a tool name of 129 characters", file(`{"name":"r","tool":"` + strings.Repeat("a", 129) + `"}`), "rules[0].tool", "tool's name"},
		{"an empty tool list", file(`{"name":"r","tool":[]}`), "rules[0].tool", "1 to 64"},
		{"65 tools", file(`{"name":"r","tool":[` + strings.TrimSuffix(strings.Repeat(`"a",`, 65), ",") + `]}`), "rules[0].tool", "1 to 64"},
		{"a tool listed twice", file(`{"name":"r","tool":["a","b","a"]}`), "rules[0].tool[2]", "already"},
		{"a tool that is a number", file(`{"name":"r","tool":["a",5]}`), "rules[0].tool[1]", "tool's name"},
		{"a tool that is an object", file(`{"name":"r","tool":{}}`), "rules[0].tool", "tool's name or a list"},
		{"an empty when list", file(`{"name":"r","tool":"t","when":[]}`), "rules[0].when", "1 to 16"},
		{"17 when conditions", file(`{"name":"r","tool":"t","when":[` + strings.TrimSuffix(strings.Repeat(`{"pointer":"/a","absent":true},`, 17), ",") + `]}`), "rules[0].when", "1 to 16"},
		{"65 tests", file(`{"name":"r","tool":"t","test":[` + strings.TrimSuffix(strings.Repeat(`{"pointer":"/a","absent":true},`, 65), ",") + `]}`), "rules[0].test", "1 to 64"},
		{"an empty test list", file(`{"name":"r","tool":"t","test":[]}`), "rules[0].test", "1 to 64"},
		{"a condition not an object", file(`{"name":"r","tool":"t","test":[{"pointer":"/a","absent":true},"x"]}`), "rules[0].test[1]", "must be a condition"},
		{"no pointer", file(`{"name":"r","tool":"t","test":{"absent":true}}`), "rules[0].test.pointer", "JSON Pointer"},
		{"a pointer without a slash", file(`{"name":"r","tool":"t","test":{"pointer":"a","absent":true}}`), "rules[0].test.pointer", "RFC 6901"},
		{"a pointer with ~2", file(`{"name":"r","tool":"t","test":{"pointer":"/a~2","absent":true}}`), "rules[0].test.pointer", "~0"},
		{"a pointer ending in ~", file(`{"name":"r","tool":"t","when":[{"pointer":"/ok","absent":true},{"pointer":"/a~","absent":true}]}`), "rules[0].when[1].pointer", "~0"},
		{"no kind", file(`{"name":"r","tool":"t","test":{"pointer":"/a"}}`), "rules[0].test", "exactly one"},
		{"two kinds", file(`{"name":"r","tool":"t","test":{"pointer":"/a","equals":1,"absent":true}}`), "rules[0].test", "exactly one"},
		{"oneOf empty", file(`{"name":"r","tool":"t","test":[{"pointer":"/a","absent":true},{"pointer":"/a","oneOf":[]}]}`), "rules[0].test[1].oneOf", "1 to 64"},
		{"oneOf of 65", file(`{"name":"r","tool":"t","test":{"pointer":"/a","oneOf":[` + strings.TrimSuffix(strings.Repeat(`1,`, 65), ",") + `]}}`), "rules[0].test.oneOf", "1 to 64"},
		{"oneOf not a list", file(`{"name":"r","tool":"t","test":{"pointer":"/a","oneOf":1}}`), "rules[0].test.oneOf", "list"},
		{"absent false", file(`{"name":"r","tool":"t","test":{"pointer":"/a","absent":false}}`), "rules[0].test.absent", "must be true"},
		{"matches not text", file(`{"name":"r","tool":"t","test":{"pointer":"/a","matches":5}}`), "rules[0].test.matches", "pattern"},
		{"matches empty", file(`{"name":"r","tool":"t","test":{"pointer":"/a","matches":""}}`), "rules[0].test.matches", "pattern"},
		{"orAbsent not a boolean", file(`{"name":"r","tool":"t","test":{"pointer":"/a","equals":1,"orAbsent":"yes"}}`), "rules[0].test.orAbsent", "true or false"},
		{"orAbsent beside absent", file(`{"name":"r","tool":"t","test":{"pointer":"/a","absent":true,"orAbsent":true}}`), "rules[0].test.orAbsent", "no meaning"},
		{"content not an object", file(`{"name":"r","tool":"t","content":"/c"}`), "rules[0].content", "object"},
		{"content without as", file(`{"name":"r","tool":"t","content":{"pointer":"/c"}}`), "rules[0].content.as", `"json"`},
		{"content as yaml", file(`{"name":"r","tool":"t","content":{"pointer":"/c","as":"yaml"}}`), "rules[0].content.as", `"json"`},
		{"content with a bad pointer", file(`{"name":"r","tool":"t","content":{"pointer":"c","as":"json"}}`), "rules[0].content.pointer", "RFC 6901"},
		{"a place with an odd member name", file(`{"name":"r","tool":"t","test":{"pointer":"","equals":{"a b":[1,{"c":1,"c":2}]}}}`), `rules[0].test.equals["a b"][1]`, `"c" is named twice`},
		{"not JSON inside", "{\"version\":1,\n\"rules\":[}", "rules[0]", "line 2, column 10"},
		{"too deep for RFC 8785", file(`{"name":"r","tool":"t","test":{"pointer":"","equals":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}}`), "", "RFC 8785"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rs, err := Parse([]byte(c.text))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, %v; want an *Error", rs, err)
			}
			if e.Place != c.place || !strings.Contains(e.Reason, c.reason) {
				t.Fatalf("got place %q reason %q; want place %q reason holding %q", e.Place, e.Reason, c.place, c.reason)
			}
		})
	}
}

func TestParseLimits(t *testing.T) {
	rule := func(i int, pattern string) string {
		return fmt.Sprintf(`{"name":"r%d","tool":"t","when":{"pointer":"/p","matches":%q}}`, i, pattern)
	}
	var rules []string
	for i := range MaxRules {
		rules = append(rules, rule(i, strings.Repeat("a", 20)))
	}
	if _, err := Parse([]byte(file(rules...))); err != nil {
		t.Fatalf("1,000 rules with 20,000 pattern parts refused: %v", err)
	}
	rules[999] = rule(999, strings.Repeat("a", 21))
	_, err := Parse([]byte(file(rules...)))
	var e *Error
	if !errors.As(err, &e) || e.Place != "rules[999]" || !strings.Contains(e.Reason, "20001 parts") {
		t.Fatalf("20,001 pattern parts: %v", err)
	}
	// Runs of stars count one part each, wherever the pattern is.
	stars := []string{fmt.Sprintf(`{"name":"s","tool":"t","test":{"pointer":"/p","matches":%q}}`, strings.Repeat("a***", 10000))}
	if _, err := Parse([]byte(file(stars...))); err != nil {
		t.Fatalf("20,000 parts written with runs of stars refused: %v", err)
	}
	rules = append(rules[:999], rule(999, strings.Repeat("a", 20)), okRule)
	if _, err := Parse([]byte(file(rules...))); !errors.As(err, &e) || e.Place != "rules" || !strings.Contains(e.Reason, "1001") {
		t.Fatalf("1,001 rules: %v", err)
	}
	big := file(`{"name":"r","tool":"t","test":{"pointer":"/a","equals":"` + strings.Repeat("x", MaxFileSize) + `"}}`)
	if _, err := Parse([]byte(big)); !errors.As(err, &e) || !strings.Contains(e.Reason, "1 MiB") {
		t.Fatalf("a file over 1 MiB: %v", err)
	}
	// Exactly 1 MiB is allowed.
	pad := MaxFileSize - len(file(okRule))
	exact := file(okRule) + strings.Repeat(" ", pad)
	if _, err := Parse([]byte(exact)); err != nil || len(exact) != MaxFileSize {
		t.Fatalf("a file of exactly 1 MiB: %v", err)
	}
}

func TestLoad(t *testing.T) {
	rs, err := Load(filepath.Join("testdata", "content-rules.example.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got := rs.Tools(); strings.Join(got, ",") != "apply_patch,edit_file,write_file" {
		t.Fatalf("Tools = %v", got)
	}
	if len(rs.Rules()) != 2 || rs.Rules()[1].Test != nil || !rs.Rules()[0].Content.AsJSON {
		t.Fatalf("rules read wrongly: %+v", rs.Rules())
	}
	if _, err := Load(filepath.Join("testdata", "no such file.json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a missing file: %v", err)
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "rules.json")
	if err := os.WriteFile(bad, []byte(`{"version":1,"rules":[{}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Load(bad)
	if err == nil || !strings.HasPrefix(err.Error(), "content rules "+bad+": rules[0].name: ") {
		t.Fatalf("a fault in a file does not name the file and the place: %v", err)
	}
}

// TestFingerprint: spacing and member order do not change it; any rule does.
func TestFingerprint(t *testing.T) {
	example, err := os.ReadFile(filepath.Join("testdata", "content-rules.example.json"))
	if err != nil {
		t.Fatal(err)
	}
	rs, err := Parse(example)
	if err != nil {
		t.Fatal(err)
	}
	want, err := canon.JCSFingerprint(example)
	if err != nil || rs.Fingerprint() != want || !canon.IsFingerprint(want) {
		t.Fatalf("Fingerprint = %s, want %s (%v)", rs.Fingerprint(), want, err)
	}
	a, _ := Parse([]byte(`{"version":1,"rules":[{"tool":"t","name":"r"}]}`))
	b, _ := Parse([]byte("{\n  \"rules\": [ { \"name\": \"r\", \"tool\": \"t\" } ],\n  \"version\": 1\n}\n"))
	c, _ := Parse([]byte(`{"version":1,"rules":[{"tool":"t","name":"s"}]}`))
	if a.Fingerprint() != b.Fingerprint() || a.Fingerprint() == c.Fingerprint() {
		t.Fatalf("fingerprints %s %s %s", a.Fingerprint(), b.Fingerprint(), c.Fingerprint())
	}
	if a.Fingerprint() != canon.Fingerprint([]byte(`{"rules":[{"name":"r","tool":"t"}],"version":1}`)) {
		t.Fatal("Fingerprint is not SHA-256 of the RFC 8785 form")
	}
}

// FuzzParse: Parse refuses with an *Error or gives rules whose fingerprint
// is the file's RFC 8785 fingerprint; it never panics.
func FuzzParse(f *testing.F) {
	example, err := os.ReadFile(filepath.Join("testdata", "content-rules.example.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(example)
	for _, s := range []string{
		file(okRule), `{"version":1,"rules":[]}`, file(`{"name":"r","tool":["a","b"],"when":[{"pointer":"/p","matches":"**/x?*"}],"content":{"pointer":"/c","as":"value"},"test":{"pointer":"/a~1b","oneOf":[1,"x",null,true,{"k":[]}],"orAbsent":true}}`),
		`{"version":1,"version":1}`, `{"version":1e0,"rules":[{"name":"\u00e9","tool":"t"}]}`, "\xff", `[`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rs, err := Parse(data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("a fault that is not an *Error: %v", err)
			}
			return
		}
		want, err := canon.JCSFingerprint(data)
		if err != nil || rs.Fingerprint() != want {
			t.Fatalf("fingerprint %s, want %s (%v)", rs.Fingerprint(), want, err)
		}
		for _, tool := range rs.Tools() {
			rs.Evaluate(tool, []byte(`{"path":"settings.json","content":"{\"scan\":true}"}`))
		}
	})
}
