package wire

import "encoding/json"

// The params._meta members of a tools/call that [ReadCall] reads.
const (
	MetaTraceparent        = "traceparent"                                // W3C trace context of the client's span
	MetaTracestate         = "tracestate"                                 // and its vendor part
	MetaApproval           = "red.prova/approval"                         // the request for approval a retried call names
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"    // the revision a 2026-07-28 call is made in
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities" // what such a client can be asked
)

// Call is what the executor reads of a tools/call's params, read once
// ([ReadCall]) and shared by every part that acts on the call: the judge
// (the name and the arguments), the telemetry (the client's trace
// context), the hold for approval (the request named, the protocol
// revision, whether the client can be asked) and the router (the name,
// whose place in the line is the Message's NameSpan).
type Call struct {
	// Name is params.name when it is a JSON string (Named is then true).
	Name  string
	Named bool
	// Arguments is params.arguments as written; nil when absent.
	Arguments []byte
	// Traceparent, Tracestate, Approval and ProtocolVersion are the
	// params._meta members of those names (MetaTraceparent, ...) when
	// _meta is an object and they are strings; "" otherwise.
	Traceparent, Tracestate, Approval, ProtocolVersion string
	// ClientElicitation is true when _meta[MetaClientCapabilities] is an
	// object naming elicitation.
	ClientElicitation bool
}

// ReadCall reads a tools/call's params from line, whose reading m is
// (Inspect's or EditRequest's): the name and the arguments from where m
// says they are, and the members of params._meta it knows in one walk of
// _meta. Strings are decoded as [Unquote] decodes them.
func ReadCall(line []byte, m *Message) Call {
	var c Call
	if m.NameSpan.Present() {
		c.Name, c.Named = Unquote(line[m.NameSpan.Start:m.NameSpan.End])
	}
	if m.ArgumentsSpan.Present() {
		c.Arguments = line[m.ArgumentsSpan.Start:m.ArgumentsSpan.End]
	}
	meta := m.MetaSpan
	if !meta.Present() || line[meta.Start] != '{' {
		return c
	}
	noteRead(ReadMeta, line[meta.Start:meta.End])
	// The line was read whole by Inspect: walking a part of it cannot fail.
	_, _ = eachMember(line[:meta.End], meta.Start, func(name []byte, _, vs, ve int) bool {
		v := line[vs:ve]
		switch string(name) {
		case MetaTraceparent:
			c.Traceparent, _ = Unquote(v)
		case MetaTracestate:
			c.Tracestate, _ = Unquote(v)
		case MetaApproval:
			c.Approval, _ = Unquote(v)
		case MetaProtocolVersion:
			c.ProtocolVersion, _ = Unquote(v)
		case MetaClientCapabilities:
			c.ClientElicitation = v[0] == '{' && hasMember(line[:ve], vs, "elicitation")
		}
		return true
	})
	return c
}

// hasMember reports whether the object at raw[i] names key.
func hasMember(raw []byte, i int, key string) bool {
	found := false
	_, _ = eachMember(raw, i, func(name []byte, _, _, _ int) bool {
		found = string(name) == key
		return !found
	})
	return found
}

// Unquote returns the text of a JSON string value as encoding/json decodes
// it (a lone surrogate escape becomes U+FFFD); ok is false for any other
// value, a number id among them.
func Unquote(raw []byte) (text string, ok bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// Quote writes s as a JSON string: quotes, backslashes and control
// characters escaped, everything else (<, > and & among it) as it is,
// invalid UTF-8 as U+FFFD.
func Quote(s string) []byte { return appendString(nil, s) }
