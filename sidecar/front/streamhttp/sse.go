package streamhttp

import (
	"strconv"

	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// appendEvent appends one server-sent event to dst: its id (when not
// empty), a retry field (when retryMS > 0), and data. An answer is one line
// of JSON, so it is one data field; a carriage return the server wrote as
// whitespace between tokens would end an event-stream line, so data is cut
// there into further data fields (the client reads a line feed in its
// place: the same JSON value). An event with empty data is a priming event.
func appendEvent(dst []byte, id string, retryMS int, data []byte) []byte {
	if id != "" {
		dst = append(dst, "id: "...)
		dst = append(dst, id...)
		dst = append(dst, '\n')
	}
	if retryMS > 0 {
		dst = append(dst, "retry: "...)
		dst = strconv.AppendInt(dst, int64(retryMS), 10)
		dst = append(dst, '\n')
	}
	dst = append(dst, "data: "...)
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '\r':
			if i+1 < len(data) && data[i+1] == '\n' {
				i++
			}
			dst = append(dst, "\ndata: "...)
		case '\n':
			dst = append(dst, "\ndata: "...)
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '\n', '\n')
}

// errorBody is a JSON-RPC error of the front's own: id as written (null
// when nil), the code and message.
func errorBody(id []byte, code int, message string) []byte {
	if id == nil {
		id = []byte("null")
	}
	return wire.ErrorLine(id, code, message, nil)
}
