package wire

import (
	"bytes"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// JSON-RPC error codes the executor answers with: the specification's from
// go-sdk's jsonrpc package, and two of the executor's own.
const (
	CodeParse          = jsonrpc.CodeParseError     // -32700: not UTF-8, not JSON
	CodeInvalidRequest = jsonrpc.CodeInvalidRequest // -32600: JSON, but not an acceptable message
	CodeInvalidParams  = jsonrpc.CodeInvalidParams  // -32602: e.g. a tool name out of form
	CodeInternalError  = jsonrpc.CodeInternalError  // -32603: e.g. a receipt that could not be written
	CodeNotTaken       = 1001                       // the call was not taken: not recorded, stopping, too many waiting
	CodeNoAnswer       = 1002                       // no answer: timeout, cancellation, server ended, an unreadable answer
)

// Span is a byte range [Start, End) in a line. The zero Span means absent:
// every JSON value is at least one byte long.
type Span struct{ Start, End int }

// Present reports whether the span covers a value.
func (s Span) Present() bool { return s.End > s.Start }

// Kind is what a message is.
type Kind int

// The kinds of message.
const (
	KindRequest      Kind = iota + 1 // method and id
	KindNotification                 // method, no id
	KindResponse                     // id and result or error
)

func (k Kind) String() string {
	switch k {
	case KindRequest:
		return "request"
	case KindNotification:
		return "notification"
	case KindResponse:
		return "response"
	}
	return "unknown"
}

// Fault says why a line is not an acceptable message.
type Fault int

// The faults, each with the JSON-RPC code of its answer.
const (
	FaultNotUTF8       Fault = iota + 1 // -32700
	FaultNotJSON                        // -32700 (also: nesting deeper than 10000)
	FaultTooLong                        // over MaxLine; -32600
	FaultBatch                          // a JSON array; -32600
	FaultNotObject                      // a bare value; -32600
	FaultDuplicate                      // two member names equal under case folding; -32600
	FaultBigNumber                      // a number beyond 2^53−1; -32600
	FaultNotMessage                     // JSON-RPC shape: version, id, method, result/error; -32600
	FaultUnknownMember                  // a top-level member no JSON-RPC message has; -32600
)

// Error is a line that is not an acceptable message. ID and IDSpan are set
// when the line is one JSON object whose top level names "id" exactly once,
// as a string, number or null, so that an answer can still be matched.
// Reason never holds a value of the line; where it names a place it gives
// its JSON Pointer (Path, also given alone), cut to MaxLogText bytes.
type Error struct {
	Code   int
	Fault  Fault
	Reason string
	Path   string // JSON Pointer of the faulty member or number; "" for none or the top
	ID     []byte
	IDSpan Span
}

func (e *Error) Error() string { return "json-rpc line: " + e.Reason }

// Message is an accepted line. The byte slices alias the line.
type Message struct {
	Kind   Kind
	Method string // decoded; requests and notifications

	ID     []byte // raw id as written; nil for a notification
	IDSpan Span

	Params     []byte // raw params; nil when absent
	ParamsSpan Span
	Result     []byte
	ResultSpan Span
	Error      []byte
	ErrorSpan  Span

	// NameSpan, ArgumentsSpan and MetaSpan are where the members the
	// protocol gives params stand in the line when params is an object
	// that names them: params.name and params.arguments (a tools/call's
	// tool and arguments) and params._meta. The zero Span when absent.
	// [ReadCall] reads a tools/call's values from them.
	NameSpan, ArgumentsSpan, MetaSpan Span

	// End is the index of the line's closing '}' of the outer object.
	End int
}

// IDIsNull reports whether the id is JSON null (only in an error response).
func (m *Message) IDIsNull() bool { return string(m.ID) == "null" }

type topMember struct {
	count  int
	nameAt int
	val    Span
}

// Inspect checks one line (without its LF) and returns what it is. It
// never modifies line. A fault is an *Error.
func Inspect(line []byte) (*Message, error) {
	if len(line) > MaxLine {
		return nil, &Error{Code: CodeInvalidRequest, Fault: FaultTooLong, Reason: "line longer than 16 MiB"}
	}
	if !utf8.Valid(line) {
		return nil, &Error{Code: CodeParse, Fault: FaultNotUTF8, Reason: "not UTF-8"}
	}
	noteRead(ReadLine, line)
	in := &inspection{line: line, unknownAt: -1, otherCaseAt: -1, c: checker{check: true}}
	in.c.top = in.noteTop
	in.c.param = in.noteParam
	end, e := in.scan()
	if e != nil {
		return nil, e
	}
	if in.c.fault != 0 {
		return in.fail(in.c.fault, in.c.reason)
	}
	if in.unknownAt >= 0 {
		return in.fail(FaultUnknownMember, "a member that no JSON-RPC message has")
	}
	m := &Message{End: end - 1}
	ver, _ := in.val(0)
	if ver == nil || !bytes.Equal(ver, []byte(`"2.0"`)) && !(ver[0] == '"' && string(decodeString(ver[1:len(ver)-1])) == "2.0") {
		return in.fail(FaultNotMessage, `"jsonrpc" must be "2.0"`)
	}
	m.ID, m.IDSpan = in.val(1)
	method, _ := in.val(2)
	m.Params, m.ParamsSpan = in.val(3)
	m.Result, m.ResultSpan = in.val(4)
	m.Error, m.ErrorSpan = in.val(5)
	m.NameSpan, m.ArgumentsSpan, m.MetaSpan = in.name, in.arguments, in.meta
	if method != nil {
		return in.request(m, method)
	}
	return in.response(m)
}

// inspection is the state of one Inspect: the line, what its top level
// names, and the checker that reads it.
type inspection struct {
	line      []byte
	tops      [6]topMember // jsonrpc, id, method, params, result, error
	unknownAt int          // the first top-level member no message has
	// params.name, params.arguments and params._meta, and the first member
	// of params whose name folds to one of them written otherwise (-1: none).
	name, arguments, meta Span
	otherCaseAt           int
	c                     checker
}

// noteTop is the checker's hook for each top-level member.
func (in *inspection) noteTop(name []byte, nameStart, vs, ve int) {
	k := topIndex(name)
	if k < 0 {
		if in.unknownAt < 0 {
			in.unknownAt = nameStart
		}
		return
	}
	t := &in.tops[k]
	t.count++
	t.nameAt = nameStart
	t.val = Span{vs, ve}
}

// noteParam is the checker's hook for each member of the top-level params
// object: it keeps where the protocol's members are, and the first member
// named as one of them in other capitals (a server that folds names by
// case reads it as that member where the executor reads nothing).
func (in *inspection) noteParam(name, key []byte, nameStart, vs, ve int) {
	switch string(name) {
	case "name":
		in.name = Span{vs, ve}
		return
	case "arguments":
		in.arguments = Span{vs, ve}
		return
	case "_meta":
		in.meta = Span{vs, ve}
		return
	}
	if in.otherCaseAt >= 0 {
		return
	}
	if key == nil {
		key = foldKey(name)
	}
	switch string(key) {
	case "NAME", "ARGUMENTS", "_META":
		in.otherCaseAt = nameStart
	}
}

// scan reads the line as one JSON value and returns the index after it;
// the line must be one JSON object.
func (in *inspection) scan() (int, *Error) {
	line := in.line
	start := skipWS(line, 0)
	end, err := in.c.value(line, start, 0)
	if err == nil && skipWS(line, end) != len(line) {
		err = errAt(end, "more after the value")
	}
	if err != nil {
		return 0, &Error{Code: CodeParse, Fault: FaultNotJSON, Reason: "not JSON: " + err.Error()}
	}
	switch line[start] {
	case '{':
		return end, nil
	case '[':
		return 0, &Error{Code: CodeInvalidRequest, Fault: FaultBatch, Reason: "a batch (JSON array) is not accepted"}
	default:
		return 0, &Error{Code: CodeInvalidRequest, Fault: FaultNotObject, Reason: "not a JSON object"}
	}
}

// val is the value of top-level member k and its span; nil when absent.
func (in *inspection) val(k int) ([]byte, Span) {
	if in.tops[k].count == 0 {
		return nil, Span{}
	}
	return in.line[in.tops[k].val.Start:in.tops[k].val.End], in.tops[k].val
}

// fail is the *Error of fault f, with the place of the fault where it has
// one and the id where the line names one the answer can use.
func (in *inspection) fail(f Fault, reason string) (*Message, error) {
	e := &Error{Code: CodeInvalidRequest, Fault: f, Reason: reason}
	if f == FaultDuplicate || f == FaultBigNumber || f == FaultUnknownMember {
		at := in.c.faultAt
		if f == FaultUnknownMember && in.unknownAt >= 0 {
			at = in.unknownAt
		}
		e.Path = Cut(pathAt(in.line, at))
		e.Reason += " at " + quotePath(e.Path)
	}
	if id := in.tops[1]; id.count == 1 {
		v := in.line[id.val.Start:id.val.End]
		if v[0] == '"' || v[0] == '-' || (v[0] >= '0' && v[0] <= '9') || string(v) == "null" {
			e.ID, e.IDSpan = v, id.val
		}
	}
	return nil, e
}

// request checks a message that names a method: a request or a
// notification.
func (in *inspection) request(m *Message, method []byte) (*Message, error) {
	if method[0] != '"' {
		return in.fail(FaultNotMessage, `"method" must be a string`)
	}
	m.Method = string(decodeString(method[1 : len(method)-1]))
	if m.Method == "" {
		// go-sdk reads a message with an empty method as a response.
		return in.fail(FaultNotMessage, `"method" must not be empty`)
	}
	if m.Result != nil || m.Error != nil {
		return in.fail(FaultNotMessage, `a request names "result" or "error"`)
	}
	if m.Params != nil && m.Params[0] != '{' && m.Params[0] != '[' {
		return in.fail(FaultNotMessage, `"params" must be an object or an array`)
	}
	if in.otherCaseAt >= 0 {
		// A member of params named as the protocol's in other capitals.
		in.c.faultAt = in.otherCaseAt
		return in.fail(FaultUnknownMember, "a member named in other capitals than the protocol's")
	}
	if m.ID == nil {
		m.Kind = KindNotification
		return m, nil
	}
	if !idForm(m.ID) {
		return in.fail(FaultNotMessage, `"id" must be a string or a whole number`)
	}
	m.Kind = KindRequest
	return m, nil
}

// response checks a message that names no method: a response.
func (in *inspection) response(m *Message) (*Message, error) {
	m.Kind = KindResponse
	if m.ID == nil {
		return in.fail(FaultNotMessage, `a message with neither "method" nor "id"`)
	}
	if m.Params != nil {
		return in.fail(FaultNotMessage, `a response names "params"`)
	}
	if (m.Result == nil) == (m.Error == nil) {
		return in.fail(FaultNotMessage, `a response must name exactly one of "result" and "error"`)
	}
	if m.Error != nil && m.Error[0] != '{' {
		return in.fail(FaultNotMessage, `"error" must be an object`)
	}
	if !idForm(m.ID) && !(m.IDIsNull() && m.Error != nil) {
		return in.fail(FaultNotMessage, `"id" must be a string or a whole number`)
	}
	return m, nil
}

func topIndex(name []byte) int {
	switch string(name) {
	case "jsonrpc":
		return 0
	case "id":
		return 1
	case "method":
		return 2
	case "params":
		return 3
	case "result":
		return 4
	case "error":
		return 5
	}
	return -1
}

// idForm: a string, or plain digits without a leading zero, at most MaxSafeInt.
func idForm(v []byte) bool {
	if v[0] == '"' {
		return true
	}
	if len(v) > 1 && v[0] == '0' {
		return false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return false
		}
	}
	return !beyondSafe(v)
}

// quotePath writes a JSON Pointer for a reason: "" is the whole message.
func quotePath(p string) string {
	if p == "" {
		return "the top"
	}
	return p
}
