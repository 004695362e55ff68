package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

var seedLines = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,2.5,-3e2],"b":{"c":null}}}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"tools":[{"name":"a"},{"name":"b","n":9007199254740991}]}}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`,
	`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`,
	` { "jsonrpc" : "2.0" , "id" : 0 , "method" : "m" } `,
	`[{"jsonrpc":"2.0","method":"m"}]`,
	`{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}`,
	`{"jsonrpc":"2.0","id":1,"result":{"n":9007199254740992}}`,
	`{"a\u0062":1,"ab":2}`,
	"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}",
	`"\ud800"`, `1e999`, ``, `{`,
}

// FuzzInspect: Inspect never panics; what it accepts is exactly one JSON
// object that encoding/json also reads, with its spans in place; SpliceID and
// SetMeta give lines Inspect accepts again.
func FuzzInspect(f *testing.F) {
	for _, s := range seedLines {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		orig := bytes.Clone(line)
		m, err := Inspect(line)
		if !bytes.Equal(orig, line) {
			t.Fatal("Inspect changed its input")
		}
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || (e.Code != CodeParse && e.Code != CodeInvalidRequest) {
				t.Fatalf("fault %v is not an *Error with a JSON-RPC code", err)
			}
			if e.ID != nil && !bytes.Equal(line[e.IDSpan.Start:e.IDSpan.End], e.ID) {
				t.Fatal("error id span out of place")
			}
			return
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(line, &obj); err != nil {
			t.Fatalf("accepted line is not one JSON object: %v", err)
		}
		if line[m.End] != '}' {
			t.Fatal("End is not the closing brace")
		}
		for _, s := range []struct {
			raw  []byte
			span Span
		}{{m.ID, m.IDSpan}, {m.Params, m.ParamsSpan}, {m.Result, m.ResultSpan}, {m.Error, m.ErrorSpan}} {
			if s.raw != nil && !bytes.Equal(line[s.span.Start:s.span.End], s.raw) {
				t.Fatal("span out of place")
			}
		}
		if m.Kind == KindNotification {
			return
		}
		out := SpliceID(line, m.IDSpan, []byte(`"provared-1-Zm9v"`))
		m2, err := Inspect(out)
		if err != nil {
			t.Fatalf("spliced line refused: %v\n%s", err, out)
		}
		if string(m2.ID) != `"provared-1-Zm9v"` || m2.Kind != m.Kind || m2.Method != m.Method {
			t.Fatal("spliced line reads differently")
		}
		if m.Kind == KindRequest && (m.Params == nil || m.Params[0] == '{') {
			meta, err := SetMeta(line, m.ParamsSpan, MetaCallID, "c-1")
			if err != nil {
				var probe map[string]json.RawMessage
				if m.Params != nil {
					if v, ok, _ := Pointer(m.Params, "/_meta"); ok && v[0] != '{' {
						return // _meta is not an object: refusing is right
					}
					_ = json.Unmarshal(m.Params, &probe)
				}
				t.Fatalf("SetMeta: %v", err)
			}
			m3, err := Inspect(meta)
			if err != nil {
				t.Fatalf("SetMeta line refused: %v\n%s", err, meta)
			}
			v, found, err := Pointer(m3.Params, "/_meta/red.prova~1call-id")
			if err != nil || !found || string(v) != `"c-1"` {
				t.Fatalf("meta not set: %s %v %v", v, found, err)
			}
		}
	})
}

// FuzzPointer: Pointer never panics, and what it finds is a JSON value that
// is a part of the document.
func FuzzPointer(f *testing.F) {
	f.Add([]byte(`{"a":[1,{"b":2}],"c~":{"/":3}}`), "/a/1/b")
	f.Add([]byte(`[0,1,2]`), "/2")
	f.Add([]byte(`{"c~":{"/":3}}`), "/c~0/~1")
	f.Add([]byte(`{`), "/a")
	f.Fuzz(func(t *testing.T, doc []byte, ptr string) {
		v, found, err := Pointer(doc, ptr)
		if err != nil || !found {
			if found {
				t.Fatal("found with an error")
			}
			return
		}
		if !json.Valid(v) || !bytes.Contains(doc, v) {
			t.Fatalf("found %q, not a value of the document", v)
		}
		if n, err := WholeNumber(v); err == nil && (n < 0 || n > MaxSafeInt) {
			t.Fatalf("WholeNumber gave %d", n)
		}
		if n, err := ListLength(v); err == nil {
			var list []json.RawMessage
			if json.Unmarshal(v, &list) != nil || len(list) != n {
				t.Fatalf("ListLength %d disagrees", n)
			}
		}
		FoldedDuplicate(v)
	})
}

// FuzzFilterTools: never panics; the output is JSON, keeps every member of
// the result other than tools as written, and lists only kept tools.
func FuzzFilterTools(f *testing.F) {
	f.Add([]byte(`{"tools":[{"name":"a","n":1.0},{"name":"b"},{"x":1}],"nextCursor":"c"}`), "a")
	f.Add([]byte(`{"tools":[]}`), "")
	f.Add([]byte(`{"tools":[ {"name":"a"} ]}`), "b")
	f.Fuzz(func(t *testing.T, result []byte, keepName string) {
		out, err := FilterTools(result, func(n string) bool { return n == keepName })
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("output not JSON: %s", out)
		}
		tools, found, err := Pointer(out, "/tools")
		if err != nil || !found {
			t.Fatalf("no tools in output: %v", err)
		}
		eachElement(tools, 0, func(_, vs, ve int) {
			if name, ok, _ := toolName(tools[vs:ve]); !ok || name != keepName {
				t.Fatalf("kept %q", tools[vs:ve])
			}
		})
	})
}
