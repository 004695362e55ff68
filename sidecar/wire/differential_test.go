package wire

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// foldingMessage is a JSON-RPC message as a Go server decodes it into
// structs with encoding/json: member names match regardless of case (under
// simple folding) and the last of several wins.
type foldingMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// foldingParams is a tools/call's params as such a server decodes them.
type foldingParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Meta      json.RawMessage `json:"_meta"`
}

// reading is what a reader takes a line to say, in canonical forms.
type reading struct {
	kind                   string // request, notification, response
	method, id, tool, args string
	meta, result, error    string
}

// canonical gives a JSON value's form after encoding/json's decoding
// (numbers as written, object members sorted); absent values are "".
func canonical(t *testing.T, raw []byte) string {
	t.Helper()
	if len(bytes.TrimSpace(raw)) == 0 {
		return ""
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("a value both readers took is not JSON: %v", err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// ours reads an accepted line as the executor does.
func ours(t *testing.T, line []byte, m *Message) reading {
	r := reading{kind: m.Kind.String(), method: m.Method, id: canonical(t, m.ID)}
	r.result, r.error = canonical(t, m.Result), canonical(t, m.Error)
	if m.Params != nil && m.Params[0] == '{' {
		if v, found, _ := Pointer(m.Params, "/name"); found && v[0] == '"' {
			r.tool = string(decodeString(v[1 : len(v)-1]))
		}
		if v, found, _ := Pointer(m.Params, "/arguments"); found {
			r.args = canonical(t, v)
		}
		if v, found, _ := Pointer(m.Params, "/_meta"); found {
			r.meta = canonical(t, v)
		}
	}
	return r
}

// folding reads a line as encoding/json into structs does; ok is false when
// it refuses the line.
func folding(t *testing.T, line []byte) (reading, bool) {
	var fm foldingMessage
	if json.Unmarshal(line, &fm) != nil {
		return reading{}, false
	}
	r := reading{method: fm.Method, id: canonical(t, fm.ID), result: canonical(t, fm.Result), error: canonical(t, fm.Error)}
	if string(fm.ID) == "null" && fm.Method == "" {
		r.id = "null"
	}
	switch {
	case fm.Method != "" && len(fm.ID) > 0 && string(fm.ID) != "null":
		r.kind = "request"
	case fm.Method != "":
		r.kind, r.id = "notification", ""
	default:
		r.kind = "response"
	}
	if len(fm.Params) > 0 && fm.Params[0] == '{' {
		var fp foldingParams
		if json.Unmarshal(fm.Params, &fp) != nil {
			return reading{}, false
		}
		var raw map[string]json.RawMessage
		_ = json.Unmarshal(fm.Params, &raw) // params that are no object name no "name": raw stays empty
		if _, named := raw["name"]; named || fp.Name != "" {
			r.tool = fp.Name
		}
		r.args, r.meta = canonical(t, fp.Arguments), canonical(t, fp.Meta)
	}
	return r, true
}

// sdk reads a line as go-sdk's jsonrpc.DecodeMessage does; ok is false
// when it refuses the line.
func sdk(t *testing.T, line []byte) (reading, bool) {
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return reading{}, false
	}
	idText := func(id jsonrpc.ID) string {
		switch v := id.Raw().(type) {
		case nil:
			return ""
		case string:
			b, _ := json.Marshal(v)
			return string(b)
		case int64:
			return strconv.FormatInt(v, 10)
		case float64:
			return strconv.FormatFloat(v, 'f', -1, 64)
		}
		t.Fatalf("go-sdk id of type %T", id.Raw())
		return ""
	}
	var r reading
	switch m := msg.(type) {
	case *jsonrpc.Request:
		r = reading{kind: "request", method: m.Method, id: idText(m.ID)}
		if !m.ID.IsValid() {
			r.kind = "notification"
		}
		if len(m.Params) > 0 && m.Params[0] == '{' {
			var fp foldingParams
			if json.Unmarshal(m.Params, &fp) != nil {
				return reading{}, false // a server decoding params refuses them
			}
			var raw map[string]json.RawMessage
			_ = json.Unmarshal(m.Params, &raw) // params that are no object name no "name": raw stays empty
			if _, named := raw["name"]; named || fp.Name != "" {
				r.tool = fp.Name
			}
			r.args, r.meta = canonical(t, fp.Arguments), canonical(t, fp.Meta)
		}
	case *jsonrpc.Response:
		r = reading{kind: "response", id: idText(m.ID), result: canonical(t, m.Result)}
		if m.Error != nil {
			r.error = "error" // compared by presence: go-sdk keeps code and message only
		}
	}
	return r, true
}

// FuzzDifferential: whatever the executor's reader accepts, a server that
// decodes it with go-sdk's jsonrpc.DecodeMessage, or with encoding/json
// into structs (which fold member names by case, last wins), reads as the
// same message: the same kind, method, id, tool name, arguments and _meta
// (and result or error) — or refuses it. The seeds hold the smuggling lines.
func FuzzDifferential(f *testing.F) {
	for _, s := range seedLines {
		f.Add([]byte(s))
	}
	for _, c := range smuggling {
		f.Add([]byte(c.line))
	}
	f.Add([]byte(`{"jsonrpc":"2.0","id":"s1","method":"tools/call","params":{"name":"read_catalogue","arguments":{"total":10,"items":[{"sku":"a"}]},"_meta":{"traceparent":"00-x"}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		m, err := Inspect(line)
		if err != nil {
			return
		}
		want := ours(t, line, m)
		if got, ok := folding(t, line); ok {
			if got.kind != want.kind || got.method != want.method || got.id != want.id || got.tool != want.tool ||
				got.args != want.args || got.meta != want.meta || got.result != want.result || got.error != want.error {
				t.Fatalf("encoding/json into structs reads %q as\n%+v\nthe executor as\n%+v", line, got, want)
			}
		}
		if got, ok := sdk(t, line); ok {
			if want.error != "" {
				want.error = "error"
			}
			if got.kind != want.kind || got.method != want.method || got.id != want.id || got.tool != want.tool ||
				got.args != want.args || got.meta != want.meta || got.result != want.result || got.error != want.error {
				t.Fatalf("go-sdk reads %q as\n%+v\nthe executor as\n%+v", line, got, want)
			}
		}
	})
}

// The smuggling lines, were they accepted, would be read differently: this
// pins that the differential check can see the difference at all.
func TestDifferentialSeesSmuggling(t *testing.T) {
	line := []byte(`{"jsonrpc":"2.0","id":"s3","method":"tools/call","params":{"name":"read_catalogue","NAME":"hidden_admin"}}`)
	got, ok := folding(t, line)
	if !ok || got.tool != "hidden_admin" {
		t.Fatalf("encoding/json into structs reads the tool as %q (ok %v), want hidden_admin", got.tool, ok)
	}
	if _, err := Inspect(line); err == nil {
		t.Fatal("Inspect accepts the line")
	}
}
