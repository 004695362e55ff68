package wire

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

// sequential is what SetMetas must equal: setMetaByHand for each member in
// turn.
func sequential(line []byte, metas []Member) ([]byte, error) {
	out := line
	for _, mm := range metas {
		m, err := Inspect(out)
		if err != nil {
			return nil, err
		}
		if out, err = setMetaByHand(out, m.ParamsSpan, mm.Key, mm.Value); err != nil {
			return nil, err
		}
	}
	if _, err := Inspect(out); err != nil {
		return nil, err
	}
	return out, nil
}

var editLines = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`,
	`{"jsonrpc":"2.0","id":"c-9","method":"m" }  `,
	`{"jsonrpc":"2.0","method":"m","params":{ },"id":7}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","params":{"n":1e2,"a":{"x":9007199254740991}}}`,
	`{"params":{"_meta":{},"n":1},"jsonrpc":"2.0","id":12345,"method":"m"}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"traceparent":"00-x"},"n":1}}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"a":1,"tracestate":  ["old"] ,"b":2,"traceparent":{}}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":{"_meta":{}}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"TRACEPARENT":"x"}}}`,
	`{ "id" : "a" , "jsonrpc":"2.0", "method":"tools/call", "params" : { "name":"echo" , "_meta" : { "k" : 1 } } }`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"_meta":{"x":1}}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"red.prova/call-id":"old"},"arguments":{},"name":"e"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":[1],"name":"e","_meta":{"traceparent":"x"}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","params":[{"name":"not params'"}]}`,
}

var editMetas = [][]Member{
	{{MetaCallID, "provared-1-x"}},
	{{MetaCallID, "provared-1-x"}, {"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}, {"tracestate", "a=b"}},
	{{"traceparent", "t1"}, {"k", "v"}, {"traceparent", "t2"}},
	{{"k", "a\"b\\c<&>\n\u2028"}},
}

// TestSetMetas: SetMetas gives the bytes of SetMeta applied member by member, and the line is
// accepted again.
func TestSetMetas(t *testing.T) {
	for _, line := range editLines {
		for _, metas := range editMetas {
			m, err := Inspect([]byte(line))
			if err != nil {
				t.Fatal(err)
			}
			want, werr := sequential([]byte(line), metas)
			got, err := SetMetas([]byte(line), m.ParamsSpan, metas)
			if (err != nil) != (werr != nil) {
				t.Fatalf("%s %v: error %v, one at a time %v", line, metas, err, werr)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s %v:\ngot  %s\nwant %s", line, metas, got, want)
			}
			if err == nil {
				if _, err := Inspect(got); err != nil {
					t.Fatalf("result refused: %v\n%s", err, got)
				}
			}
		}
	}
	for _, bad := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":"x"}}`,
	} {
		m, err := Inspect([]byte(bad))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := SetMetas([]byte(bad), m.ParamsSpan, editMetas[0]); err == nil {
			t.Errorf("SetMetas(%s) accepted", bad)
		}
		if _, _, err := EditRequest([]byte(bad), m, []byte(`"x"`), editMetas[0]); err == nil {
			t.Errorf("EditRequest(%s) accepted", bad)
		}
	}
}

// checkEdit holds EditRequest to SpliceID then SetMeta one at a time, and its Message to what
// Inspect reads from the line it made.
func checkEdit(t *testing.T, line []byte, newID []byte, metas []Member) {
	t.Helper()
	m, err := Inspect(line)
	if err != nil || m.Kind != KindRequest {
		return
	}
	spliced := line
	if newID != nil {
		spliced = SpliceID(line, m.IDSpan, newID)
	}
	want, werr := sequential(spliced, metas)
	got, gm, err := EditRequest(line, m, newID, metas)
	if (err != nil) != (werr != nil) {
		t.Fatalf("%s: error %v, one at a time %v", line, err, werr)
	}
	if err != nil {
		return
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s:\ngot  %s\nwant %s", line, got, want)
	}
	im, err := Inspect(got)
	if err != nil {
		t.Fatalf("edited line refused: %v\n%s", err, got)
	}
	if !sameReading(gm, im) || im.Result != nil || im.Error != nil {
		t.Fatalf("%s: message %+v, Inspect reads %+v", got, gm, im)
	}
}

// sameReading reports whether a reading made from edits is Inspect's.
func sameReading(gm, im *Message) bool {
	return gm.Kind == im.Kind && gm.Method == im.Method && gm.IDSpan == im.IDSpan && bytes.Equal(gm.ID, im.ID) &&
		gm.ParamsSpan == im.ParamsSpan && bytes.Equal(gm.Params, im.Params) && gm.End == im.End &&
		gm.ResultSpan == im.ResultSpan && bytes.Equal(gm.Result, im.Result) && gm.ErrorSpan == im.ErrorSpan &&
		bytes.Equal(gm.Error, im.Error) && gm.NameSpan == im.NameSpan && gm.ArgumentsSpan == im.ArgumentsSpan &&
		gm.MetaSpan == im.MetaSpan
}

// checkSplice holds SpliceValue of a request's name (the router's edit) and of any message's id to the
// bytes asked for, and its reading to Inspect's of the line it made.
func checkSplice(t *testing.T, line []byte, value string) {
	t.Helper()
	m, err := Inspect(line)
	if err != nil {
		return
	}
	for _, span := range []Span{m.NameSpan, m.IDSpan} {
		if !span.Present() {
			continue
		}
		v := Quote(value)
		got, gm := SpliceValue(line, m, span, v)
		want := append(append(append([]byte(nil), line[:span.Start]...), v...), line[span.End:]...)
		if !bytes.Equal(got, want) {
			t.Fatalf("%s:\ngot  %s\nwant %s", line, got, want)
		}
		im, err := Inspect(got)
		if err != nil {
			if len(got) > MaxLine {
				return
			}
			t.Fatalf("spliced line refused: %v\n%s", err, got)
		}
		if !sameReading(gm, im) {
			t.Fatalf("%s: message %+v, Inspect reads %+v", got, gm, im)
		}
	}
}

// TestSpliceValue: a name or an id replaced keeps every other byte, and the reading moved is Inspect's.
func TestSpliceValue(t *testing.T) {
	for _, line := range append(append(editLines, callLines...), seedLines...) {
		for _, v := range []string{"", "read_file", "a\"b\\c\u2028é"} {
			checkSplice(t, []byte(line), v)
		}
	}
}

// FuzzSpliceValue: for any line Inspect accepts, SpliceValue of its name and id is what TestSpliceValue
// holds it to.
func FuzzSpliceValue(f *testing.F) {
	for _, s := range append(editLines, callLines...) {
		f.Add([]byte(s), "read_file")
	}
	f.Fuzz(func(t *testing.T, line []byte, value string) { checkSplice(t, line, value) })
}

// TestEditRequest: one pass gives the bytes and the reading of SpliceID, SetMeta one at a time and
// Inspect again.
func TestEditRequest(t *testing.T) {
	for _, line := range editLines {
		for _, metas := range append(editMetas, nil) {
			for _, id := range [][]byte{nil, []byte(`"provared-1-Zm9v"`), []byte(`7`)} {
				checkEdit(t, []byte(line), id, metas)
			}
		}
	}
	m, _ := Inspect([]byte(`{"jsonrpc":"2.0","method":"notifications/x"}`))
	if _, _, err := EditRequest([]byte(`{"jsonrpc":"2.0","method":"notifications/x"}`), m, nil, editMetas[0]); err == nil {
		t.Error("a notification was edited")
	}
}

// FuzzEditRequest: for any line Inspect reads as a request, EditRequest equals SpliceID and SetMeta
// one at a time, and its Message is Inspect's reading of its line.
func FuzzEditRequest(f *testing.F) {
	for _, s := range append(editLines, seedLines...) {
		f.Add([]byte(s), "traceparent", "v")
	}
	f.Fuzz(func(t *testing.T, line []byte, key, value string) {
		metas := []Member{{MetaCallID, "provared-1-x"}, {key, value}, {"tracestate", value}}
		checkEdit(t, line, []byte(`"provared-1-Zm9v"`), metas)
		checkEdit(t, line, nil, metas[1:2])
	})
}

// setMetaByHand is the edit SetMeta made before SetMetas did it for every
// member at once, kept as the reference SetMetas is held to: a new line in
// which params._meta[key] is the string value,
// keeping every other byte as written. line must be a line Inspect accepted
// and params its ParamsSpan (the zero Span when the line has no params). It
// creates params and _meta when absent and
// replaces the value when key is already there. params or _meta that are not
// objects are an error.
func setMetaByHand(line []byte, params Span, key, value string) ([]byte, error) {
	member := append(appendString(nil, key), ':')
	member = appendString(member, value)
	if !params.Present() {
		end := len(line) - 1
		for end > 0 && isWS(line[end]) {
			end--
		}
		if end <= 0 || line[end] != '}' {
			return nil, errors.New("set meta: end is not the closing brace")
		}
		ins := append([]byte(`,"params":{"_meta":{`), member...)
		ins = append(ins, "}}"...)
		return insertAt(line, end, ins), nil
	}
	if line[params.Start] != '{' {
		return nil, errors.New("set meta: params is not an object")
	}
	var meta Span
	_, err := eachMember(line[:params.End], params.Start, func(name []byte, _, vs, ve int) bool {
		if string(name) == "_meta" {
			meta = Span{vs, ve}
			return false
		}
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("set meta: params: %w", err)
	}
	if !meta.Present() {
		ins := append([]byte(`"_meta":{`), member...)
		ins = append(ins, '}')
		return insertFirst(line, params.Start, ins), nil
	}
	if line[meta.Start] != '{' {
		return nil, errors.New("set meta: params._meta is not an object")
	}
	var old Span
	_, err = eachMember(line[:meta.End], meta.Start, func(name []byte, _, vs, ve int) bool {
		if string(name) == key {
			old = Span{vs, ve}
			return false
		}
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("set meta: params._meta: %w", err)
	}
	if old.Present() {
		return SpliceID(line, old, appendString(nil, value)), nil
	}
	return insertFirst(line, meta.Start, member), nil
}

// insertFirst puts a member at the start of the object whose '{' is at open,
// with a comma after it when the object has members.
func insertFirst(line []byte, open int, member []byte) []byte {
	if line[skipWS(line, open+1)] != '}' {
		member = append(member, ',')
	}
	return insertAt(line, open+1, member)
}

func insertAt(line []byte, at int, ins []byte) []byte {
	out := make([]byte, 0, len(line)+len(ins))
	out = append(out, line[:at]...)
	out = append(out, ins...)
	return append(out, line[at:]...)
}
