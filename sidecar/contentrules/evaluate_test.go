package contentrules

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
)

func mustParse(t testing.TB, text string) *Rules {
	t.Helper()
	rs, err := Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func exampleRules(t testing.TB) *Rules {
	t.Helper()
	rs, err := Load(filepath.Join("testdata", "content-rules.example.json"))
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

const (
	scanRule  = "the scan setting in settings.json stays off"
	wholeRule = "settings.json is written whole, never edited in part"
)

// TestSeedExample plays the rules file of the executor's documentation.
func TestSeedExample(t *testing.T) {
	rs := exampleRules(t)
	long := strings.Repeat("a/", 2100) + "settings.json"
	for _, c := range []struct {
		name, tool, args    string
		rule, code, message string // "" rule: let through
	}{
		{"scan off", "write_file", `{"path":"/proj/settings.json","content":"{\"scan\": false, \"label\": \"x\"}"}`, "", "", ""},
		{"scan absent", "write_file", `{"path":"/proj/settings.json","content":"{\"label\": \"x\"}"}`, "", "", ""},
		{"scan on", "write_file", `{"path":"/proj/settings.json","content":"{\"label\": \"x\", \"scan\": true}"}`,
			scanRule, CodeContentRule, `Content rule "the scan setting in settings.json stays off": the value at "/scan" in the content at "/content" must equal false, or be absent.`},
		{"scan as text", "write_file", `{"path":"settings.json","content":"{\"scan\": \"false\"}"}`, scanRule, CodeContentRule, ""},
		{"a Windows path", "write_file", `{"path":"C:\\proj\\settings.json","content":"{\"scan\":true}"}`, scanRule, CodeContentRule, ""},
		{"another file", "write_file", `{"path":"/proj/notes.json","content":"{\"scan\":true}"}`, "", "", ""},
		{"a path given as a list is not text: the rule does not apply", "write_file", `{"path":["settings.json"],"content":"{\"scan\":true}"}`, "", "", ""},
		{"no path: the rule does not apply", "write_file", `{"content":"{\"scan\":true}"}`, "", "", ""},
		{"a lone SCAN passes (names are compared exactly)", "write_file", `{"path":"settings.json","content":"{\"SCAN\":true}"}`, "", "", ""},
		{"content nested in content is a string", "write_file", `{"path":"settings.json","content":"\"{\\\"scan\\\": true}\""}`, "", "", ""},
		{"content not JSON", "write_file", `{"path":"settings.json","content":"scan = true"}`,
			scanRule, CodeContentUnreadable, `Content rule "the scan setting in settings.json stays off": the content at "/content" cannot be read exactly as JSON: it is not JSON.`},
		{"content with scan twice", "write_file", `{"path":"settings.json","content":"{\"scan\":false,\"scan\":true}"}`, scanRule, CodeContentUnreadable, ""},
		{"content with scan and SCAN", "write_file", `{"path":"settings.json","content":"{\"scan\":false,\"SCAN\":true}"}`, scanRule, CodeContentUnreadable, ""},
		{"content with a big number", "write_file", `{"path":"settings.json","content":"{\"scan\":false,\"n\":9007199254740992}"}`, scanRule, CodeContentUnreadable, ""},
		{"content with a lone surrogate", "write_file", `{"path":"settings.json","content":"{\"scan\":false,\"n\":\"\\ud800\"}"}`, scanRule, CodeContentUnreadable, ""},
		{"nothing at the content pointer", "write_file", `{"path":"settings.json","text":"{}"}`,
			scanRule, CodeContentUnreadable, `Content rule "the scan setting in settings.json stays off": nothing is at the content pointer "/content".`},
		{"content not text", "write_file", `{"path":"settings.json","content":{"scan":true}}`,
			scanRule, CodeContentUnreadable, `Content rule "the scan setting in settings.json stays off": the value at "/content" is not text holding JSON.`},
		{"a path too long to test", "write_file", `{"path":"` + long + `","content":"{}"}`,
			scanRule, CodeContentUnreadable, `Content rule "the scan setting in settings.json stays off": the value at "/path" in the arguments is a text over 4,096 characters, too long to test against a pattern.`},
		{"arguments with Path and path", "write_file", `{"path":"notes.txt","Path":"settings.json","content":"{}"}`,
			scanRule, CodeContentUnreadable, `Content rule "the scan setting in settings.json stays off": the arguments cannot be read exactly: two members of one object have names that differ only in capitals.`},
		{"arguments not JSON", "write_file", `{"path":`, scanRule, CodeContentUnreadable, ""},
		{"no arguments", "write_file", ``, "", "", ""},
		{"edit_file on settings.json", "edit_file", `{"path":"/p/settings.json","old":"a","new":"b"}`,
			wholeRule, CodeContentRule, `Content rule "settings.json is written whole, never edited in part": the rule refuses every call it applies to.`},
		{"apply_patch on settings.json", "apply_patch", `{"path":"settings.json"}`, wholeRule, CodeContentRule, ""},
		{"edit_file elsewhere", "edit_file", `{"path":"/p/readme.md","old":"a","new":"b"}`, "", "", ""},
		{"a tool no rule names, even unreadable", "read_file", `{"path":"settings.json","PATH":1}`, "", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := rs.Evaluate(c.tool, []byte(c.args))
			if c.rule == "" {
				if got != nil {
					t.Fatalf("refused: %+v", got)
				}
				return
			}
			if got == nil {
				t.Fatal("let through")
			}
			if got.Rule != c.rule || got.Code != c.code || got.RuleFingerprint != canon.Fingerprint([]byte(c.rule)) {
				t.Fatalf("got %+v", got)
			}
			if c.message != "" && got.Message != c.message {
				t.Fatalf("message %q\nwant    %q", got.Message, c.message)
			}
			if got.Message != `Content rule "`+c.rule+`": `+got.Why+"." {
				t.Fatalf("Message and Why disagree: %q / %q", got.Message, got.Why)
			}
		})
	}
}

// TestConditions runs every kind of condition against a value that meets
// it, one that does not, and nothing.
func TestConditions(t *testing.T) {
	for _, c := range []struct {
		name, cond, content string
		pass                bool
	}{
		{"equals a number", `"pointer":"/a","equals":1`, `{"a":1}`, true},
		{"equals a number written otherwise", `"pointer":"/a","equals":1`, `{"a":1.0}`, true},
		{"equals another number", `"pointer":"/a","equals":1`, `{"a":2}`, false},
		{"equals: text is not a number", `"pointer":"/a","equals":1`, `{"a":"1"}`, false},
		{"equals: nothing there", `"pointer":"/a","equals":1`, `{}`, false},
		{"equals: nothing there, orAbsent", `"pointer":"/a","equals":1,"orAbsent":true`, `{}`, true},
		{"equals: orAbsent false", `"pointer":"/a","equals":1,"orAbsent":false`, `{}`, false},
		{"equals null is not absent", `"pointer":"/a","equals":null`, `{}`, false},
		{"equals null", `"pointer":"/a","equals":null`, `{"a":null}`, true},
		{"equals false", `"pointer":"/a","equals":false`, `{"a":false}`, true},
		{"equals false: null is not false", `"pointer":"/a","equals":false`, `{"a":null}`, false},
		{"equals an object in any order", `"pointer":"/a","equals":{"x":1,"y":[1,"z"]}`, `{"a":{"y":[1,"z"],"x":1}}`, true},
		{"equals an object with one more member", `"pointer":"/a","equals":{"x":1}`, `{"a":{"x":1,"y":2}}`, false},
		{"equals a list in another order", `"pointer":"/a","equals":[1,2]`, `{"a":[2,1]}`, false},
		{"equals the whole content", `"pointer":"","equals":{"a":1}`, `{"a":1}`, true},
		{"oneOf meets", `"pointer":"/mode","oneOf":["ro","rw"]`, `{"mode":"rw"}`, true},
		{"oneOf fails", `"pointer":"/mode","oneOf":["ro","rw"]`, `{"mode":"wx"}`, false},
		{"oneOf nothing there", `"pointer":"/mode","oneOf":["ro"]`, `{}`, false},
		{"oneOf nothing there, orAbsent", `"pointer":"/mode","oneOf":["ro"],"orAbsent":true`, `{}`, true},
		{"oneOf of mixed values", `"pointer":"/m","oneOf":[null,true,{"k":1}]`, `{"m":{"k":1}}`, true},
		{"absent: nothing there", `"pointer":"/debug","absent":true`, `{}`, true},
		{"absent: null is something", `"pointer":"/debug","absent":true`, `{"debug":null}`, false},
		{"absent: a step into text finds nothing", `"pointer":"/a/b","absent":true`, `{"a":"text"}`, true},
		{"matches text", `"pointer":"/p","matches":"*.json"`, `{"p":"a.json"}`, true},
		{"matches fails", `"pointer":"/p","matches":"*.json"`, `{"p":"a/b.json"}`, false},
		{"matches: a number is not text", `"pointer":"/p","matches":"**"`, `{"p":5}`, false},
		{"matches: nothing there", `"pointer":"/p","matches":"**"`, `{}`, false},
		{"matches: nothing there, orAbsent", `"pointer":"/p","matches":"**","orAbsent":true`, `{}`, true},
		{"matches: a text of 4,096 characters", `"pointer":"/p","matches":"**"`, `{"p":"` + strings.Repeat("é", 4096) + `"}`, true},
		{"a list index", `"pointer":"/items/1","equals":"b"`, `{"items":["a","b"]}`, true},
		{"an index past the end", `"pointer":"/items/2","absent":true`, `{"items":["a","b"]}`, true},
		{"the index -", `"pointer":"/items/-","absent":true`, `{"items":["a"]}`, true},
		{"an index with a leading zero", `"pointer":"/items/01","absent":true`, `{"items":["a","b"]}`, true},
		{"~1 and ~0", `"pointer":"/a~1b/c~0d","equals":1`, `{"a/b":{"c~d":1}}`, true},
		{"an empty member name", `"pointer":"/","equals":1`, `{"":1}`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			rs := mustParse(t, file(`{"name":"r","tool":"t","content":{"pointer":"/c","as":"value"},"test":{`+c.cond+`}}`))
			got := rs.Evaluate("t", []byte(`{"c":`+c.content+`}`))
			if c.pass != (got == nil) {
				t.Fatalf("pass = %v, want %v (%+v)", got == nil, c.pass, got)
			}
			if got != nil && got.Code != CodeContentRule {
				t.Fatalf("code %s", got.Code)
			}
			// The same condition as a when: it decides whether the rule applies.
			rs = mustParse(t, file(`{"name":"w","tool":"t","when":{`+c.cond+`}}`))
			if applied := rs.Evaluate("t", []byte(c.content)) != nil; applied != c.pass {
				t.Fatalf("as a when: applied = %v, want %v", applied, c.pass)
			}
		})
	}
}

func TestMessages(t *testing.T) {
	for _, c := range []struct{ rule, args, want string }{
		{`{"name":"n","tool":"t","test":{"pointer":"/mode","oneOf":["ro",1,null]}}`, `{"mode":"x"}`,
			`Content rule "n": the value at "/mode" in the arguments must be one of "ro", 1, null.`},
		{`{"name":"n","tool":"t","test":{"pointer":"/debug","absent":true}}`, `{"debug":false}`,
			`Content rule "n": the value at "/debug" in the arguments must be absent.`},
		{`{"name":"n","tool":"t","test":{"pointer":"/p","matches":"safe/**"}}`, `{"p":"x"}`,
			`Content rule "n": the value at "/p" in the arguments must be text matching the pattern "safe/**".`},
		{`{"name":"n","tool":"t","content":{"pointer":"/c","as":"json"},"test":{"pointer":"","equals":{"a":[1,true]}}}`, `{"c":"[]"}`,
			`Content rule "n": the content at "/c" must equal {"a": [1, true]}.`},
		{`{"name":"n","tool":"t","test":{"pointer":"","equals":{}}}`, `{"x":1}`,
			`Content rule "n": the arguments must equal {}.`},
		{`{"name":"n","tool":"t","test":{"pointer":"/a","equals":1},"content":{"pointer":"/c","as":"value"}}`, `{"c":{"a":2}}`,
			`Content rule "n": the value at "/a" in the content at "/c" must equal 1.`},
	} {
		got := mustParse(t, file(c.rule)).Evaluate("t", []byte(c.args))
		if got == nil || got.Message != c.want {
			t.Errorf("got %+v\nwant %q", got, c.want)
		}
	}
}

// TestOrder: every rule naming the tool, in the file's order; the first
// refusal wins; rules on other tools are not read.
func TestOrder(t *testing.T) {
	rs := mustParse(t, file(
		`{"name":"other tool","tool":"u"}`,
		`{"name":"does not apply","tool":"t","when":{"pointer":"/kind","equals":"x"}}`,
		`{"name":"passes","tool":["s","t"],"test":{"pointer":"/n","equals":1}}`,
		`{"name":"first to refuse","tool":"t","test":{"pointer":"/m","equals":1}}`,
		`{"name":"second to refuse","tool":"t"}`,
	))
	if got := rs.Evaluate("t", []byte(`{"n":1,"m":2}`)); got == nil || got.Rule != "first to refuse" {
		t.Fatalf("got %+v", got)
	}
	if got := rs.Evaluate("t", []byte(`{"n":1,"m":1}`)); got == nil || got.Rule != "second to refuse" {
		t.Fatalf("got %+v", got)
	}
	if got := rs.Evaluate("t", []byte(`{"n":1,"m":1,"kind":"x"}`)); got == nil || got.Rule != "does not apply" {
		t.Fatalf("got %+v", got)
	}
	if got := rs.Evaluate("s", []byte(`{"n":1}`)); got != nil {
		t.Fatalf("got %+v", got)
	}
	if got := rs.Evaluate("u", []byte(`{}`)); got == nil || got.Rule != "other tool" {
		t.Fatalf("got %+v", got)
	}
	// Unreadable arguments are charged to the first rule naming the tool.
	if got := rs.Evaluate("t", []byte(`{"n":1,"N":1}`)); got == nil || got.Rule != "does not apply" || got.Code != CodeContentUnreadable {
		t.Fatalf("got %+v", got)
	}
}

// TestUnreadableArguments: every way arguments cannot be read exactly.
func TestUnreadableArguments(t *testing.T) {
	rs := mustParse(t, file(`{"name":"r","tool":"t","test":{"pointer":"/x","absent":true}}`))
	for _, args := range []string{
		`{"a":1,"a":1}`, `{"a":{"b":1,"B":2}}`, `[{"Straße":1,"STRASSE":2,"straße":3}]`, `{"n":9007199254740992}`,
		`{"n":-9007199254740992}`, `{"n":1e300}`, `{"n":9007199254740991.5}`, `{"s":"\udc00"}`, "{\"s\":\"\xff\"}",
		`{"a":}`, `{"a":1} x`, `{'a':1}`, "\ufeff{}", `{"a":1,}`, `{"a":01}`, `{"a":tru}`, "{\"a\":\"x\ny\"}",
		strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1),
	} {
		got := rs.Evaluate("t", []byte(args))
		if got == nil || got.Code != CodeContentUnreadable || !strings.Contains(got.Why, "the arguments cannot be read exactly") {
			t.Errorf("%.40q: got %+v", args, got)
		}
	}
	for _, args := range []string{`{"n":9007199254740991,"m":-9007199254740991,"f":0.5,"e":1e15}`, " {\"k\" : [ ] } ", `{"s":"\ud83d\ude00"}`} {
		if got := rs.Evaluate("t", []byte(args)); got != nil {
			t.Errorf("%q refused: %+v", args, got)
		}
	}
}

// TestNoArgumentValueInRefusals: whatever refuses, the refusal holds no
// value, and no member name, from the arguments.
func TestNoArgumentValueInRefusals(t *testing.T) {
	rs := exampleRules(t)
	const secret = "s3cret"
	for _, args := range []string{
		`{"path":"settings.json","content":"{\"scan\":\"` + secret + `\"}"}`,
		`{"path":"settings.json","content":"{\"` + secret + `\":1,\"S3CRET\":2}"}`,
		`{"path":"settings.json","content":"` + secret + `"}`,
		`{"path":"settings.json","` + secret + `":1,"S3CRET":1,"content":"{}"}`,
		`{"path":"settings.json","` + secret + `":1,"` + secret + `":1}`,
		`{"path":"` + secret + strings.Repeat("x", 5000) + `"}`,
		`{"path":"settings.json","content":{"` + secret + `":1}}`,
		`{"path":"settings.json","content":"{\"` + secret + `\":9007199254740993}"}`,
	} {
		for _, tool := range []string{"write_file", "edit_file"} {
			got := rs.Evaluate(tool, []byte(args))
			if got == nil {
				t.Fatalf("%s %s let through", tool, args[:min(len(args), 60)])
			}
			if strings.Contains(strings.ToLower(got.Message), secret) || strings.Contains(strings.ToLower(got.Why), secret) {
				t.Fatalf("the refusal holds an argument value: %q", got.Message)
			}
		}
	}
}

// TestConcurrentEvaluate: one Rules serves several goroutines (run with -race).
func TestConcurrentEvaluate(t *testing.T) {
	rs := exampleRules(t)
	done := make(chan *Refusal)
	for range 8 {
		go func() {
			done <- rs.Evaluate("write_file", []byte(`{"path":"settings.json","content":"{\"scan\":true}"}`))
		}()
	}
	for range 8 {
		if got := <-done; got == nil || got.Rule != scanRule {
			t.Fatalf("got %+v", got)
		}
	}
}
