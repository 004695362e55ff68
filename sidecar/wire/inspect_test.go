package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestInspectAccepts(t *testing.T) {
	cases := []struct {
		name, line string
		kind       Kind
		method, id string
		params     string
		result     string
		errv       string
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`, KindRequest, "tools/call", "1", `{"name":"x"}`, "", ""},
		{"string id", `{"jsonrpc":"2.0","id":"a-1","method":"ping"}`, KindRequest, "ping", `"a-1"`, "", "", ""},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, KindNotification, "notifications/initialized", "", "", "", ""},
		{"response", `{"jsonrpc":"2.0","id":7,"result":{"n":9007199254740991}}`, KindResponse, "", "7", "", `{"n":9007199254740991}`, ""},
		{"error response", `{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"no"}}`, KindResponse, "", "7", "", "", `{"code":-32601,"message":"no"}`},
		{"error response null id", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, KindResponse, "", "null", "", "", `{"code":-32700,"message":"x"}`},
		{"odd spacing", " \t{ \"id\" : 3 ,\"jsonrpc\"\t:\"2.0\" , \"method\":\"m\" , \"params\" : [ 1 , 2 ] }\r ", KindRequest, "m", "3", "[ 1 , 2 ]", "", ""},
		{"escaped names", `{"json\u0072pc":"2\u002e0","\u0069d":"x","method":"a\/b"}`, KindRequest, "a/b", `"x"`, "", "", ""},
		{"nested members kept", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"extra":{"a":[1,2,{"b":null}]}}}`, KindRequest, "m", "1", `{"extra":{"a":[1,2,{"b":null}]}}`, "", ""},
		{"safe number forms", `{"jsonrpc":"2.0","method":"m","params":{"a":-9007199254740991,"b":1.5e-300,"c":9.007199254740991e15,"d":0.000,"e":-0,"f":1E+2}}`, KindNotification, "m", "", `{"a":-9007199254740991,"b":1.5e-300,"c":9.007199254740991e15,"d":0.000,"e":-0,"f":1E+2}`, "", ""},
		{"same name in sibling objects", `{"jsonrpc":"2.0","method":"m","params":{"a":{"x":1},"b":{"x":1}}}`, KindNotification, "m", "", `{"a":{"x":1},"b":{"x":1}}`, "", ""},
		{"lone surrogates differ", `{"jsonrpc":"2.0","method":"m","params":{"\ud800":1,"\ud801":2}}`, KindNotification, "m", "", `{"\ud800":1,"\ud801":2}`, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			line := []byte(c.line)
			m, err := Inspect(line)
			if err != nil {
				t.Fatalf("Inspect: %v", err)
			}
			if m.Kind != c.kind || m.Method != c.method || string(m.ID) != c.id ||
				string(m.Params) != c.params || string(m.Result) != c.result || string(m.Error) != c.errv {
				t.Fatalf("got kind %v method %q id %q params %q result %q error %q", m.Kind, m.Method, m.ID, m.Params, m.Result, m.Error)
			}
			if c.id != "" && string(line[m.IDSpan.Start:m.IDSpan.End]) != c.id {
				t.Fatalf("id span %v", m.IDSpan)
			}
			if c.params != "" && string(line[m.ParamsSpan.Start:m.ParamsSpan.End]) != c.params {
				t.Fatalf("params span %v", m.ParamsSpan)
			}
			if line[m.End] != '}' {
				t.Fatalf("End %d is not the closing brace", m.End)
			}
		})
	}
}

func TestInspectRefuses(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":5,"result":{"n":%s}}`
	cases := []struct {
		name, line string
		code       int
		fault      Fault
		id         string // the id Error carries, "" for none
	}{
		{"not utf-8", "{\"jsonrpc\":\"2.0\",\"method\":\"m\xff\"}", CodeParse, FaultNotUTF8, ""},
		{"not json", `{"jsonrpc":"2.0",`, CodeParse, FaultNotJSON, ""},
		{"empty", ``, CodeParse, FaultNotJSON, ""},
		{"two objects", `{"jsonrpc":"2.0","method":"m"}{"jsonrpc":"2.0","method":"m"}`, CodeParse, FaultNotJSON, ""},
		{"trailing comma", `{"jsonrpc":"2.0","method":"m",}`, CodeParse, FaultNotJSON, ""},
		{"bad escape", `{"jsonrpc":"2.0","method":"\x"}`, CodeParse, FaultNotJSON, ""},
		{"control char", "{\"jsonrpc\":\"2.0\",\"method\":\"a\tb\"}", CodeParse, FaultNotJSON, ""},
		{"leading zero", `{"jsonrpc":"2.0","id":01,"method":"m"}`, CodeParse, FaultNotJSON, ""},
		{"nan", `{"jsonrpc":"2.0","id":1,"result":NaN}`, CodeParse, FaultNotJSON, ""},
		{"too deep", `{"jsonrpc":"2.0","method":"m","params":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`, CodeParse, FaultNotJSON, ""},
		{"batch", `[{"jsonrpc":"2.0","method":"m"}]`, CodeInvalidRequest, FaultBatch, ""},
		{"bare value", `"hello"`, CodeInvalidRequest, FaultNotObject, ""},
		{"bare number", `12`, CodeInvalidRequest, FaultNotObject, ""},
		{"duplicate top", `{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}`, CodeInvalidRequest, FaultDuplicate, ""},
		{"duplicate deep", `{"jsonrpc":"2.0","id":4,"method":"m","params":{"a":[{"x":1,"y":2,"x":3}]}}`, CodeInvalidRequest, FaultDuplicate, "4"},
		{"duplicate escaped", `{"jsonrpc":"2.0","id":4,"method":"m","params":{"ab":1,"a\u0062":2}}`, CodeInvalidRequest, FaultDuplicate, "4"},
		{"big integer", strings.Replace(big, "%s", "9007199254740992", 1), CodeInvalidRequest, FaultBigNumber, "5"},
		{"big negative", strings.Replace(big, "%s", "-9007199254740992", 1), CodeInvalidRequest, FaultBigNumber, "5"},
		{"big exponent", strings.Replace(big, "%s", "1e300", 1), CodeInvalidRequest, FaultBigNumber, "5"},
		{"big written with fraction", strings.Replace(big, "%s", "9007199254740992.0", 1), CodeInvalidRequest, FaultBigNumber, "5"},
		{"just above with fraction", strings.Replace(big, "%s", "9007199254740991.5", 1), CodeInvalidRequest, FaultBigNumber, "5"},
		{"big mantissa", strings.Replace(big, "%s", "0.9007199254740992e16", 1), CodeInvalidRequest, FaultBigNumber, "5"},
		{"huge exponent", strings.Replace(big, "%s", "1e99999999999999999999999", 1), CodeInvalidRequest, FaultBigNumber, "5"},
		{"no version", `{"id":1,"method":"m"}`, CodeInvalidRequest, FaultNotMessage, "1"},
		{"wrong version", `{"jsonrpc":"1.0","id":1,"method":"m"}`, CodeInvalidRequest, FaultNotMessage, "1"},
		{"version number", `{"jsonrpc":2.0,"id":1,"method":"m"}`, CodeInvalidRequest, FaultNotMessage, "1"},
		{"method not text", `{"jsonrpc":"2.0","id":1,"method":5}`, CodeInvalidRequest, FaultNotMessage, "1"},
		{"method empty", `{"jsonrpc":"2.0","method":""}`, CodeInvalidRequest, FaultNotMessage, ""},
		{"id fraction", `{"jsonrpc":"2.0","id":1.5,"method":"m"}`, CodeInvalidRequest, FaultNotMessage, "1.5"},
		{"id negative", `{"jsonrpc":"2.0","id":-1,"method":"m"}`, CodeInvalidRequest, FaultNotMessage, "-1"},
		{"id object", `{"jsonrpc":"2.0","id":{},"method":"m"}`, CodeInvalidRequest, FaultNotMessage, ""},
		{"id null request", `{"jsonrpc":"2.0","id":null,"method":"m"}`, CodeInvalidRequest, FaultNotMessage, "null"},
		{"id null result", `{"jsonrpc":"2.0","id":null,"result":{}}`, CodeInvalidRequest, FaultNotMessage, "null"},
		{"params scalar", `{"jsonrpc":"2.0","id":1,"method":"m","params":3}`, CodeInvalidRequest, FaultNotMessage, "1"},
		{"request with result", `{"jsonrpc":"2.0","id":1,"method":"m","result":{}}`, CodeInvalidRequest, FaultNotMessage, "1"},
		{"response both", `{"jsonrpc":"2.0","id":1,"result":{},"error":{}}`, CodeInvalidRequest, FaultNotMessage, "1"},
		{"response neither", `{"jsonrpc":"2.0","id":1}`, CodeInvalidRequest, FaultNotMessage, "1"},
		{"no method no id", `{"jsonrpc":"2.0","result":{}}`, CodeInvalidRequest, FaultNotMessage, ""},
		{"error not object", `{"jsonrpc":"2.0","id":1,"error":"x"}`, CodeInvalidRequest, FaultNotMessage, "1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Inspect([]byte(c.line))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Inspect = %+v, %v; want *Error", m, err)
			}
			if e.Code != c.code || e.Fault != c.fault {
				t.Fatalf("code %d fault %d (%s); want %d %d", e.Code, e.Fault, e.Reason, c.code, c.fault)
			}
			if string(e.ID) != c.id {
				t.Fatalf("error id %q, want %q", e.ID, c.id)
			}
			if c.id != "" && c.line[e.IDSpan.Start:e.IDSpan.End] != c.id {
				t.Fatalf("error id span %v", e.IDSpan)
			}
		})
	}
}

func TestInspectTooLong(t *testing.T) {
	line := make([]byte, MaxLine+1)
	_, err := Inspect(line)
	var e *Error
	if !errors.As(err, &e) || e.Fault != FaultTooLong {
		t.Fatalf("got %v", err)
	}
}

// The executor never re-encodes: a line that passes keeps every byte, and a
// spliced id changes only the id's bytes.
func TestSpliceIDKeepsBytes(t *testing.T) {
	line := []byte(`{ "jsonrpc" : "2.0", "result":{"big":9007199254740991,"f":1.0E+2,"s":"\u00e9"} ,"id":"client-7" }`)
	m, err := Inspect(line)
	if err != nil {
		t.Fatal(err)
	}
	out := SpliceID(line, m.IDSpan, []byte(`"provared-1-abc"`))
	want := `{ "jsonrpc" : "2.0", "result":{"big":9007199254740991,"f":1.0E+2,"s":"\u00e9"} ,"id":"provared-1-abc" }`
	if string(out) != want {
		t.Fatalf("got  %s\nwant %s", out, want)
	}
	if !bytes.Equal(line, []byte(`{ "jsonrpc" : "2.0", "result":{"big":9007199254740991,"f":1.0E+2,"s":"\u00e9"} ,"id":"client-7" }`)) {
		t.Fatal("SpliceID changed its input")
	}
	m2, err := Inspect(out)
	if err != nil || string(m2.ID) != `"provared-1-abc"` {
		t.Fatalf("spliced line: %v %v", m2, err)
	}
}

func TestSetMeta(t *testing.T) {
	cases := []struct{ name, line, want string }{
		{"no params", `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`,
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"k":"v"}}}`},
		{"no params trailing space", `{"jsonrpc":"2.0","id":1,"method":"m" }  `,
			`{"jsonrpc":"2.0","id":1,"method":"m" ,"params":{"_meta":{"k":"v"}}}  `},
		{"empty params", `{"jsonrpc":"2.0","id":1,"method":"m","params":{ }}`,
			`{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"k":"v"} }}`},
		{"params without meta", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"n":1e2,"a":{"x":9007199254740991}}}`,
			`{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"k":"v"},"n":1e2,"a":{"x":9007199254740991}}}`},
		{"empty meta", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{},"n":1}}`,
			`{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"k":"v"},"n":1}}`},
		{"meta with members", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"traceparent":"00-x"},"n":1}}`,
			`{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"k":"v","traceparent":"00-x"},"n":1}}`},
		{"key replaced", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"a":1,"k":  ["old"] ,"b":2}}}`,
			`{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"a":1,"k":  "v" ,"b":2}}}`},
		{"nested meta untouched", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":{"_meta":{}}}}`,
			`{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"k":"v"},"x":{"_meta":{}}}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Inspect([]byte(c.line))
			if err != nil {
				t.Fatal(err)
			}
			out, err := SetMeta([]byte(c.line), m.ParamsSpan, "k", "v")
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != c.want {
				t.Fatalf("got  %s\nwant %s", out, c.want)
			}
			if _, err := Inspect(out); err != nil {
				t.Fatalf("result not accepted: %v", err)
			}
		})
	}
	for _, bad := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":"x"}}`,
	} {
		m, err := Inspect([]byte(bad))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := SetMeta([]byte(bad), m.ParamsSpan, "k", "v"); err == nil {
			t.Fatalf("SetMeta(%s) accepted", bad)
		}
	}
	// The value is escaped as JSON.
	line := []byte(`{"jsonrpc":"2.0","id":1,"method":"m"}`)
	m, _ := Inspect(line)
	out, err := SetMeta(line, m.ParamsSpan, MetaCallID, "a\"b\\c<&>\n")
	if err != nil {
		t.Fatal(err)
	}
	got, found, err := Pointer(out, "/params/_meta/red.prova~1call-id")
	var s string
	if err != nil || !found || json.Unmarshal(got, &s) != nil || s != "a\"b\\c<&>\n" {
		t.Fatalf("meta value %s %v %v", got, found, err)
	}
}

func TestBuilders(t *testing.T) {
	line := ErrorLine([]byte(`"c-1"`), CodeNoAnswer, "no answer: the time ran out", []byte(`{"stub":"abc"}`))
	want := `{"jsonrpc":"2.0","id":"c-1","error":{"code":1002,"message":"no answer: the time ran out","data":{"stub":"abc"}}}`
	if string(line) != want {
		t.Fatalf("got %s", line)
	}
	if m, err := Inspect(line); err != nil || m.Kind != KindResponse {
		t.Fatalf("error line not accepted: %v", err)
	}
	line = ErrorLine(nil, CodeParse, "not JSON", nil)
	if string(line) != `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"not JSON"}}` {
		t.Fatalf("got %s", line)
	}
	if _, err := Inspect(line); err != nil {
		t.Fatal(err)
	}
	res, err := ToolErrorResult("the slip does not allow supplies.order", map[string]any{
		MetaRefused: "not-in-slip", MetaCodes: []string{"not-in-slip"}, MetaDenial: "abc<>",
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRes := `{"content":[{"type":"text","text":"Not taken by the executor: the slip does not allow supplies.order"}],"isError":true,"_meta":{"red.prova/codes":["not-in-slip"],"red.prova/denial":"abc<>","red.prova/refused":"not-in-slip"}}`
	if string(res) != wantRes {
		t.Fatalf("got  %s\nwant %s", res, wantRes)
	}
	full := ResultLine([]byte("3"), res)
	if m, err := Inspect(full); err != nil || string(m.Result) != wantRes {
		t.Fatalf("result line: %v", err)
	}
	if res, _ := ToolErrorResult("x", nil); string(res) != `{"content":[{"type":"text","text":"Not taken by the executor: x"}],"isError":true}` {
		t.Fatalf("got %s", res)
	}
	if _, err := ToolErrorResult("x", map[string]any{"f": func() {}}); err == nil {
		t.Fatal("unencodable meta accepted")
	}
}

func TestInspectDuplicateInLargeObject(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","method":"m","params":{`)
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&b, `"k%d":%d,`, i, i)
	}
	ok := b.String() + `"z":{"k1":1}}}`
	if _, err := Inspect([]byte(ok)); err != nil {
		t.Fatalf("large object refused: %v", err)
	}
	dup := b.String() + `"k\u0037":1}}`
	_, err := Inspect([]byte(dup))
	var e *Error
	if !errors.As(err, &e) || e.Fault != FaultDuplicate {
		t.Fatalf("duplicate in a large object: %v", err)
	}
}
