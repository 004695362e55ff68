package streamhttp

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// A tool may name arguments that a 2026-07-28 client mirrors into headers (x-mcp-header in its input
// schema: Mcp-Param-<Name>), so that a gateway can route on them. The executor judges the body; a
// gateway routing on a header that says something else would act on what was not judged. So the front
// learns each tool's annotations from the tools/list answers it hands on, and a tools/call's
// Mcp-Param-* headers must then say exactly what the body says, each argument present having its
// header and no header without its argument. A call that carries Mcp-Param-* headers for a tool whose
// annotations the front has not seen is refused too (the protocol's HeaderMismatch, after which a
// client lists the tools and calls again).

// paramBinding is one x-mcp-header annotation: where the argument is and the header's name.
type paramBinding struct {
	path   []string
	header string // the name after Mcp-Param-, lower case
}

// toolParams are the annotations of the tools seen in tools/list answers, by tool name.
type toolParams struct {
	mu    sync.RWMutex
	tools map[string][]paramBinding
}

// maxSchemaDepth bounds how deep a schema's properties are walked for annotations.
const maxSchemaDepth = 16

// schemaProperty is what an annotation needs of a schema's property.
type schemaProperty struct {
	XMCPHeader json.RawMessage           `json:"x-mcp-header"`
	Properties map[string]schemaProperty `json:"properties"`
}

// learn takes the annotations of every tool a tools/list result names. A tool with none is recorded
// too: its calls then carry no Mcp-Param-* header.
func (tp *toolParams) learn(result []byte) {
	var r struct {
		Tools []struct {
			Name        string `json:"name"`
			InputSchema struct {
				Properties map[string]schemaProperty `json:"properties"`
			} `json:"inputSchema"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &r) != nil {
		return
	}
	tp.mu.Lock()
	defer tp.mu.Unlock()
	if tp.tools == nil {
		tp.tools = map[string][]paramBinding{}
	}
	for _, t := range r.Tools {
		if t.Name == "" {
			continue
		}
		tp.tools[t.Name] = collectBindings(t.InputSchema.Properties, nil, nil, 0)
	}
}

func collectBindings(props map[string]schemaProperty, prefix []string, out []paramBinding, depth int) []paramBinding {
	if depth > maxSchemaDepth {
		return out
	}
	for name, p := range props {
		path := append(append([]string(nil), prefix...), name)
		var header string
		if json.Unmarshal(p.XMCPHeader, &header) == nil && header != "" {
			out = append(out, paramBinding{path: path, header: strings.ToLower(header)})
		}
		out = collectBindings(p.Properties, path, out, depth+1)
	}
	return out
}

// paramHeaders are a request's Mcp-Param-* headers: lower-case name after the prefix → value.
func paramHeaders(h http.Header) (map[string]string, *headerError) {
	out := map[string]string{}
	for key := range h {
		if len(key) <= len(headerParamPrefix) || !strings.EqualFold(key[:len(headerParamPrefix)], headerParamPrefix) {
			continue
		}
		v, _, err := readOne(h, key, true)
		if err != nil {
			return nil, badHeader("%s", err.Error())
		}
		out[strings.ToLower(key[len(headerParamPrefix):])] = v
	}
	return out, nil
}

// check holds a 2026-07-28 tools/call's Mcp-Param-* headers to its body.
func (tp *toolParams) check(h http.Header, m *wire.Message) *headerError {
	if m.Kind != wire.KindRequest || m.Method != "tools/call" {
		return nil
	}
	headers, herr := paramHeaders(h)
	if herr != nil {
		return herr
	}
	var name string
	var args []byte
	if m.Params != nil {
		if v, found, err := wire.Pointer(m.Params, ptrName); err == nil && found {
			name, _ = jsonText(v)
		}
		if v, found, err := wire.Pointer(m.Params, "/arguments"); err == nil && found {
			args = v
		}
	}
	tp.mu.RLock()
	bindings, known := tp.tools[name]
	tp.mu.RUnlock()
	if !known {
		if len(headers) > 0 {
			return mismatch("Mcp-Param headers for a tool whose x-mcp-header annotations the executor has not seen: call tools/list, then call again")
		}
		return nil
	}
	seen := map[string]bool{}
	for _, b := range bindings {
		seen[b.header] = true
		arg, present := lookupArg(args, b.path)
		hv, has := headers[b.header]
		switch {
		case !present && has:
			return mismatch("Mcp-Param-" + b.header + " is sent for an argument the body does not have")
		case present && !has:
			return mismatch("Mcp-Param-" + b.header + " is missing for an argument the body has")
		case present && !paramAgrees(hv, arg):
			return mismatch("Mcp-Param-" + b.header + " says otherwise than the body")
		}
	}
	for hname := range headers {
		if !seen[hname] {
			return mismatch("Mcp-Param-" + cutName(hname) + " names no argument the tool annotates")
		}
	}
	return nil
}

// lookupArg finds the argument at path; absent or null is not present.
func lookupArg(args []byte, path []string) ([]byte, bool) {
	cur := args
	for _, p := range path {
		var obj map[string]json.RawMessage
		if len(cur) == 0 || json.Unmarshal(cur, &obj) != nil {
			return nil, false
		}
		v, ok := obj[p]
		if !ok {
			return nil, false
		}
		cur = v
	}
	if len(cur) == 0 || string(bytes.TrimSpace(cur)) == "null" {
		return nil, false
	}
	return cur, true
}

// paramAgrees reports whether a header value (decoded from the base64 sentinel) is the argument: the
// same string; "true" or "false" for a boolean; the same whole number (compared as numbers) within
// 2^53-1 for an integer. Any other argument agrees with no header.
func paramAgrees(header string, arg []byte) bool {
	hv, err := decodeName(header)
	if err != nil {
		return false
	}
	switch arg[0] {
	case '"':
		s, err := jsonText(arg)
		return err == nil && s == hv
	case 't', 'f':
		return string(arg) == hv
	}
	bn, err := strconv.ParseFloat(string(arg), 64)
	if err != nil || bn != math.Trunc(bn) || math.Abs(bn) > wire.MaxSafeInt {
		return false
	}
	// A JSON number only: no hex, no Inf or NaN, no underscores (ParseFloat takes them all).
	if hv == "" || !(hv[0] == '-' || hv[0] >= '0' && hv[0] <= '9') || !json.Valid([]byte(hv)) {
		return false
	}
	hn, err := strconv.ParseFloat(hv, 64)
	return err == nil && hn == bn
}
