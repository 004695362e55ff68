package wire

import (
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// NotTakenPrefix begins the text of every tool error the executor writes
// itself for a call it did not send on.
const NotTakenPrefix = "Not taken by the executor: "

// ErrorLine builds a JSON-RPC error response (without LF) of the executor's
// own. id is the raw id as the client wrote it (nil writes null); data is a
// raw JSON value or nil for none. message should be short, lowercase prose
// with no secret and no argument value.
//
// The error object is go-sdk's [jsonrpc.Error]; the id is spliced in as the
// client wrote it (go-sdk's ID would write it anew).
func ErrorLine(id []byte, code int, message string, data []byte) []byte {
	obj, err := marshalNoEscape(&jsonrpc.Error{Code: int64(code), Message: message, Data: data})
	if err != nil {
		// Only data that is not JSON fails; the error goes out without it.
		obj, _ = marshalNoEscape(&jsonrpc.Error{Code: int64(code), Message: message})
	}
	out := make([]byte, 0, 40+len(id)+len(obj))
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	if id == nil {
		out = append(out, "null"...)
	} else {
		out = append(out, id...)
	}
	out = append(out, `,"error":`...)
	out = append(out, obj...)
	return append(out, '}')
}

// ResultLine builds a JSON-RPC response (without LF) carrying the raw result.
func ResultLine(id []byte, result []byte) []byte {
	out := make([]byte, 0, 40+len(id)+len(result))
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	if id == nil {
		out = append(out, "null"...)
	} else {
		out = append(out, id...)
	}
	out = append(out, `,"result":`...)
	out = append(out, result...)
	return append(out, '}')
}

// ModernRevision is the first protocol revision without sessions (2026-07-28): a request names its
// revision in params._meta, and every result names its resultType.
const ModernRevision = "2026-07-28"

// Modern reports whether a request's protocol revision (its params._meta's) is ModernRevision or later.
func Modern(revision string) bool { return revision >= ModernRevision }

// Complete puts "resultType":"complete" first in a result object the executor wrote itself (one that
// names no resultType): the form a client of the 2026-07-28 era reads. Anything that is not an object
// is returned as it is.
func Complete(result []byte) []byte {
	if len(result) < 2 || result[0] != '{' {
		return result
	}
	out := make([]byte, 0, len(result)+26)
	out = append(out, `{"resultType":"complete"`...)
	rest := result[1:]
	for len(rest) > 0 && isWS(rest[0]) {
		rest = rest[1:]
	}
	if len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, rest...)
}

// ToolErrorResult builds the result of a tool call the executor did not send:
// {"content":[{"type":"text","text":NotTakenPrefix+reason}],"isError":true,"_meta":meta}.
// meta values must be JSON-encodable (strings, lists of strings, numbers);
// the members come out sorted by name. A nil or empty meta leaves _meta out.
func ToolErrorResult(reason string, meta map[string]any) ([]byte, error) {
	out := []byte(`{"content":[{"type":"text","text":`)
	out = appendString(out, NotTakenPrefix+reason)
	out = append(out, `}],"isError":true`...)
	if len(meta) > 0 {
		m, err := marshalNoEscape(meta)
		if err != nil {
			return nil, fmt.Errorf("tool error _meta: %w", err)
		}
		out = append(out, `,"_meta":`...)
		out = append(out, m...)
	}
	return append(out, '}'), nil
}

func marshalNoEscape(v any) ([]byte, error) {
	var buf jsonBuffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.b[:len(buf.b)-1], nil // Encode ends with '\n'
}

type jsonBuffer struct{ b []byte }

func (j *jsonBuffer) Write(p []byte) (int, error) { j.b = append(j.b, p...); return len(p), nil }

// Meta keys the executor writes into a tool error's _meta.
const (
	MetaRefused = "red.prova/refused" // why: "not-in-slip", "content-rule", "unlisted", ...
	MetaCodes   = "red.prova/codes"   // the check before acting's codes, a list
	MetaDenial  = "red.prova/denial"  // the denial's fingerprint
	MetaRule    = "red.prova/rule"    // the content rule's name
	MetaCallID  = "red.prova/call-id" // params._meta key carrying the executor's call id
)
