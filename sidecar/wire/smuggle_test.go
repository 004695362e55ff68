package wire

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// smuggling holds lines that a reader folding member names by case (as
// encoding/json does into structs, and so Go MCP servers built on it) would
// read as another message than the one the executor judges. The first six
// are the lines of issue 12. Each must be refused.
var smuggling = []struct {
	name, line string
}{
	{"upper method and params beside a null result", `{"jsonrpc":"2.0","id":"s1","METHOD":"tools/call","PARAMS":{"name":"hidden_admin","arguments":{}},"result":null}`},
	{"second params in capitals", `{"jsonrpc":"2.0","id":"s2","method":"tools/call","params":{"name":"read_catalogue","arguments":{}},"PARAMS":{"name":"hidden_admin","arguments":{}}}`},
	{"second name in capitals", `{"jsonrpc":"2.0","id":"s3","method":"tools/call","params":{"name":"read_catalogue","NAME":"hidden_admin"}}`},
	{"second arguments in capitals", `{"jsonrpc":"2.0","id":"s4","method":"tools/call","params":{"name":"pay","arguments":{"total":10},"ARGUMENTS":{"total":100000}}}`},
	{"call hidden in a ping", `{"jsonrpc":"2.0","id":"s5","method":"ping","METHOD":"tools/call","PARAMS":{"name":"hidden_admin","arguments":{}}}`},
	{"call hidden in a notification", `{"jsonrpc":"2.0","method":"notifications/initialized","METHOD":"tools/call","ID":"s6","PARAMS":{"name":"hidden_admin","arguments":{}}}`},
	{"amount in capitals", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"pay","arguments":{"total":10,"TOTAL":100000}}}`},
	{"mixed case amount", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"pay","arguments":{"Total":10,"toTAL":100000}}}`},
	{"long s", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"pay","arguments":{"cost":10,"co\u017ft":100000}}}`},
	{"long s written raw", "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/call\",\"params\":{\"name\":\"pay\",\"arguments\":{\"cost\":10,\"coſt\":100000}}}"},
	{"kelvin sign", `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"pay","arguments":{"kind":"a","\u212aind":"b"}}}`},
	{"kelvin sign in the tool name member", "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"tools/call\",\"params\":{\"name\":\"read_catalogue\",\"\u212a\":1,\"k\":2}}"},
	{"dz digraph orbit", `{"jsonrpc":"2.0","id":13,"method":"m","params":{"\u01c4":1,"\u01c5":2}}`},
	{"escaped capital name", `{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"read_catalogue","n\u0041me":"hidden_admin"}}`},
	{"in _meta", `{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"pay","arguments":{},"_meta":{"traceparent":"a","TRACEPARENT":"b"}}}`},
	{"_meta in capitals", `{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"pay","_meta":{},"_META":{}}}`},
	{"nested in a list", `{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"pay","arguments":{"items":[{"sku":"a"},{"sku":"b","SKU":"c"}]}}}`},
	{"deep", `{"jsonrpc":"2.0","id":18,"method":"m","params":{"a":{"b":{"c":{"d":{"x":1,"X":2}}}}}}`},
	{"in a large object", largeFolded()},
	{"exact repeat", `{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"name":"read_catalogue","name":"hidden_admin"}}`},
	{"id twice by case", `{"jsonrpc":"2.0","id":20,"ID":21,"method":"ping"}`},
	{"jsonrpc twice by case", `{"jsonrpc":"2.0","JSONRPC":"1.0","id":22,"method":"ping"}`},
	{"request with a null result", `{"jsonrpc":"2.0","id":23,"method":"ping","result":null}`},
	{"request with an error", `{"jsonrpc":"2.0","id":24,"method":"ping","error":{"code":1,"message":"x"}}`},
	{"request with another member", `{"jsonrpc":"2.0","id":25,"method":"ping","extra":{}}`},
	{"notification with another member", `{"jsonrpc":"2.0","method":"notifications/initialized","Method":"x"}`},
	{"response with a method in capitals", `{"jsonrpc":"2.0","id":26,"result":{},"METHOD":"tools/call"}`},
	{"response with params in capitals", `{"jsonrpc":"2.0","id":27,"result":{},"Params":{}}`},
	{"response with a result in capitals", `{"jsonrpc":"2.0","id":28,"error":{"code":1,"message":"x"},"RESULT":{}}`},
	{"member path with slash and tilde", `{"jsonrpc":"2.0","id":29,"method":"m","params":{"a/b~c":{"k":1,"K":2}}}`},
	{"big number in arguments", `{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"pay","arguments":{"items":[1,9007199254740993]}}}`},
	{"name only in capitals", `{"jsonrpc":"2.0","id":33,"method":"tools/call","params":{"NAME":"hidden_admin","arguments":{}}}`},
	{"arguments only in capitals", `{"jsonrpc":"2.0","id":34,"method":"tools/call","params":{"name":"pay","Arguments":{"total":100000}}}`},
	{"_meta only with a kelvin sign", "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"_meta\u212a\":1,\"_Meta\":{}}}"},
	{"very long member name", `{"jsonrpc":"2.0","id":31,"method":"m","params":{"` + strings.Repeat("é", 300) + `":1,"` + strings.Repeat("É", 300) + `":2}}`},
}

func largeFolded() string {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":32,"method":"tools/call","params":{"name":"pay","arguments":{`)
	for i := range 40 {
		fmt.Fprintf(&b, `"m%02d":%d,`, i, i)
	}
	b.WriteString(`"total":1,"TOTAL":2}}}`)
	return b.String()
}

// Every smuggling line is refused with -32600; the refusal names the
// member's place by JSON Pointer and no value; the texts are pinned in
// testdata/refusals.golden.
func TestInspectRefusesSmuggling(t *testing.T) {
	var golden strings.Builder
	for _, c := range smuggling {
		m, err := Inspect([]byte(c.line))
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%s: Inspect = %+v, %v; want a refusal", c.name, m, err)
			continue
		}
		if e.Code != CodeInvalidRequest {
			t.Errorf("%s: code %d, want %d", c.name, e.Code, CodeInvalidRequest)
		}
		for _, value := range []string{"hidden_admin", "100000", "tools/call", "read_catalogue"} {
			if strings.Contains(e.Reason, value) {
				t.Errorf("%s: the refusal %q holds a value of the line", c.name, e.Reason)
			}
		}
		if len(e.Path) > MaxLogText+32 {
			t.Errorf("%s: the path is %d bytes, not cut", c.name, len(e.Path))
		}
		fmt.Fprintf(&golden, "%s\n\t%d %s\n", c.name, e.Code, e.Reason)
	}
	checkGolden(t, "refusals.golden", golden.String())
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("the refusal texts differ from %s (run with -update after checking):\n%s", path, got)
	}
}

// Names equal under simple folding share a key exactly when
// strings.EqualFold holds; names equal only under full folding (ß and SS)
// or under no simple folding (the dotted capital I and i) are different
// names, as encoding/json holds them too.
func TestFoldingOrbits(t *testing.T) {
	cases := []struct {
		a, b string
		same bool
	}{
		{"total", "TOTAL", true},
		{"s", "\u017f", true},         // the long s
		{"S", "\u017f", true},         // the long s and the capital S
		{"k", "\u212a", true},         // the Kelvin sign
		{"K", "\u212a", true},         // the Kelvin sign and the capital K
		{"\u00e5", "\u212b", true},    // å and the Ångström sign
		{"\u01c4", "\u01c6", true},    // DŽ and dž
		{"\u03c3", "\u03c2", true},    // σ and final ς
		{"\u00df", "SS", false},       // ß: full folding only
		{"\u0130", "i", false},        // İ: no simple folding to i
		{"\u0131", "I", false},        // ı
		{"name", "name\u200b", false}, // a zero width space is a character
	}
	for _, c := range cases {
		if got := strings.EqualFold(c.a, c.b); got != c.same {
			t.Errorf("strings.EqualFold(%q, %q) = %v, want %v", c.a, c.b, got, c.same)
		}
		if got := FoldKey(c.a) == FoldKey(c.b); got != c.same {
			t.Errorf("FoldKey(%q) == FoldKey(%q) is %v, want %v", c.a, c.b, got, c.same)
		}
		line := `{"jsonrpc":"2.0","method":"m","params":{` + jsonName(c.a) + `:1,` + jsonName(c.b) + `:2}}`
		_, err := Inspect([]byte(line))
		if refused := err != nil; refused != c.same {
			t.Errorf("Inspect(%s) = %v, want refused %v", line, err, c.same)
		}
	}
}

// jsonName writes a member name with every non-ASCII rune escaped.
func jsonName(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		if r < 0x80 {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
