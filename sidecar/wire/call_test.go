package wire

import (
	"bytes"
	"sync"
	"testing"
)

// callLines are tools/call lines whose params the tests read: members in any order, a _meta that is not
// an object, members named like the protocol's inside the arguments, escapes in names and values.
var callLines = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
	`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"arguments":{"name":"x","_meta":{"traceparent":"no"}},"name":"e\u0063ho"}}`,
	`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","tracestate":"a=b",` +
		`"red.prova/approval":"R1","io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}},"name":"w"}}`,
	`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":7,"arguments":null,"_meta":5}}`,
	`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"w","_meta":{"traceparent":1,"red.prova/approval":{},` +
		`"io.modelcontextprotocol/clientCapabilities":["elicitation"]}}}`,
	`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"w","_meta":{"io.modelcontextprotocol/clientCapabilities":{"roots":{}}}}}`,
	`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":[{"name":"w"}]}`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/call"}`,
	`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"\ud800"}}`,
	`{"jsonrpc":"2.0","method":"notifications/x","params":{"name":"n","_meta":{"tracestate":"t"}}}`,
}

// referenceCall reads a call's params as the executor did before ReadCall, one JSON Pointer for each
// member: ReadCall is held to it.
func referenceCall(t *testing.T, m *Message) Call {
	t.Helper()
	var c Call
	if m.Params == nil || m.Params[0] != '{' {
		return c
	}
	str := func(ptr string) string {
		v, found, err := Pointer(m.Params, ptr)
		if err != nil || !found {
			return ""
		}
		s, _ := Unquote(v)
		return s
	}
	if v, found, err := Pointer(m.Params, "/name"); err == nil && found {
		c.Name, c.Named = Unquote(v)
	}
	if v, found, err := Pointer(m.Params, "/arguments"); err == nil && found {
		c.Arguments = v
	}
	c.Traceparent, c.Tracestate = str("/_meta/traceparent"), str("/_meta/tracestate")
	c.Approval, c.ProtocolVersion = str("/_meta/red.prova~1approval"), str("/_meta/io.modelcontextprotocol~1protocolVersion")
	_, c.ClientElicitation, _ = Pointer(m.Params, "/_meta/io.modelcontextprotocol~1clientCapabilities/elicitation")
	return c
}

// spanOf is where Pointer finds ptr in the line's params: the reference for Inspect's spans.
func spanOf(m *Message, ptr string) Span {
	if m.Params == nil || m.Params[0] != '{' {
		return Span{}
	}
	v, found, err := Pointer(m.Params, ptr)
	if err != nil || !found {
		return Span{}
	}
	start := m.ParamsSpan.Start + (cap(m.Params) - cap(v)) // v is a part of m.Params, a part of the line
	return Span{start, start + len(v)}
}

// checkCall holds Inspect's spans of params' members and ReadCall to what JSON Pointers find.
func checkCall(t *testing.T, line []byte) {
	t.Helper()
	m, err := Inspect(line)
	if err != nil {
		return
	}
	for _, c := range []struct {
		what string
		got  Span
		ptr  string
	}{{"name", m.NameSpan, "/name"}, {"arguments", m.ArgumentsSpan, "/arguments"}, {"_meta", m.MetaSpan, "/_meta"}} {
		if want := spanOf(m, c.ptr); c.got != want {
			t.Fatalf("%s: %s at %v, a pointer finds it at %v", line, c.what, c.got, want)
		}
	}
	got, want := ReadCall(line, m), referenceCall(t, m)
	if got.Name != want.Name || got.Named != want.Named || !bytes.Equal(got.Arguments, want.Arguments) ||
		(got.Arguments == nil) != (want.Arguments == nil) || got.Traceparent != want.Traceparent ||
		got.Tracestate != want.Tracestate || got.Approval != want.Approval ||
		got.ProtocolVersion != want.ProtocolVersion || got.ClientElicitation != want.ClientElicitation {
		t.Fatalf("%s:\nReadCall  %+v\npointers %+v", line, got, want)
	}
}

// TestReadCall: the params a call is judged, traced, held and routed by are the ones JSON Pointers
// find, read from Inspect's spans and one walk of _meta.
func TestReadCall(t *testing.T) {
	for _, line := range append(append(callLines, editLines...), seedLines...) {
		checkCall(t, []byte(line))
	}
	m, err := Inspect([]byte(callLines[2]))
	if err != nil {
		t.Fatal(err)
	}
	c := ReadCall([]byte(callLines[2]), m)
	if c.Name != "w" || !c.Named || c.Approval != "R1" || c.ProtocolVersion != "2026-07-28" || !c.ClientElicitation ||
		c.Tracestate != "a=b" || c.Traceparent == "" {
		t.Fatalf("ReadCall: %+v", c)
	}
}

// FuzzReadCall: for any line Inspect accepts, its spans of params' members and ReadCall's values are
// what JSON Pointers find.
func FuzzReadCall(f *testing.F) {
	for _, s := range append(callLines, editLines...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) { checkCall(t, line) })
}

// readCounter counts, under the read hook, the readings of bytes that hold a mark.
type readCounter struct {
	mu   sync.Mutex
	mark []byte
	n    map[string]int
}

func countReads(t *testing.T, mark string) *readCounter {
	rc := &readCounter{mark: []byte(mark), n: map[string]int{}}
	t.Cleanup(SetReadHook(func(what string, b []byte) {
		if bytes.Contains(b, rc.mark) {
			rc.mu.Lock()
			rc.n[what]++
			rc.mu.Unlock()
		}
	}))
	return rc
}

func (rc *readCounter) get(what string) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.n[what]
}

// TestReadHook: the hook hears of each reading once: Inspect of the line, a Pointer of the value it
// looks in, ReadCall and EditRequest of _meta alone; restoring it silences it.
func TestReadHook(t *testing.T) {
	line := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"m":"MARK"},"_meta":{"k":"MARK"}}}`)
	rc := countReads(t, "MARK")
	m, err := Inspect(line)
	if err != nil {
		t.Fatal(err)
	}
	ReadCall(line, m)
	if _, _, err := EditRequest(line, m, []byte(`"x"`), []Member{{Key: "k2", Value: "v"}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Pointer(m.Params, "/arguments/m"); err != nil {
		t.Fatal(err)
	}
	for what, want := range map[string]int{ReadLine: 1, ReadMeta: 2, ReadPointer: 1} {
		if got := rc.get(what); got != want {
			t.Errorf("%s readings: %d, want %d", what, got, want)
		}
	}
}
