package robustness_test

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// The codes a client gets for a line the executor does not take.
const (
	codeParse          = -32700
	codeInvalidRequest = -32600
	codeInvalidParams  = -32602
	codeNotTaken       = 1001
	codeNoAnswer       = 1002
	codeInternal       = -32603
)

// A hostile client: every line the strict reader refuses is answered with
// the JSON-RPC error the seed names, goes no further (the server never
// receives it), and the executor stays up for the next line. Refusals by
// rule write a denial; lines refused by the reader write nothing.
func TestHostileClientLines(t *testing.T) {
	env, record := newEnv(t, "hostile", nil)
	x := start(t, executorBin, env)
	x.initialize()

	big := "9007199254740992" // 2^53
	cases := []struct {
		name string
		line string
		id   string // the id the error answer carries; "" = not checked
		code int
	}{
		{"duplicate member at the top", `{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"tools/call","params":{"name":"echo","arguments":{"m":"dup-top"}}}`, "1", codeInvalidRequest},
		{"duplicate member deep in the arguments", callLine("2", "echo", `{"a":{"b":[{"c":1,"d":[{"e":{"f":1,"f":2}}]}]},"m":"dup-deep"}`), "2", codeInvalidRequest},
		{"duplicate member spelled with an escape", callLine("3", "echo", `{"a":1,"\u0061":2,"m":"dup-escaped"}`), "3", codeInvalidRequest},
		{"duplicate member in _meta", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"m":"dup-meta"},"_meta":{"x":1,"x":2}}}`, "4", codeInvalidRequest},
		{"duplicate params", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"notinslip","arguments":{"m":"dup-params"}},"params":{"name":"echo","arguments":{"m":"dup-params"}}}`, "5", codeInvalidRequest},
		{"duplicate id", `{"jsonrpc":"2.0","id":6,"id":7,"method":"tools/call","params":{"name":"echo","arguments":{"m":"dup-id"}}}`, "null", codeInvalidRequest},
		{"2^53 in the arguments", callLine("8", "echo", `{"n":`+big+`,"m":"big-args"}`), "8", codeInvalidRequest},
		{"-2^53 in the arguments", callLine("9", "echo", `{"n":-`+big+`,"m":"big-negative"}`), "9", codeInvalidRequest},
		{"1e300 in the arguments", callLine("10", "echo", `{"n":1e300,"m":"big-exponent"}`), "10", codeInvalidRequest},
		{"2^53-1 and a half", callLine("11", "echo", `{"n":9007199254740991.5,"m":"big-fraction"}`), "11", codeInvalidRequest},
		{"2^53 as the amount", callLine("12", "order", `{"total":`+big+`,"m":"big-amount"}`), "12", codeInvalidRequest},
		{"2^53 in _meta", `{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"echo","arguments":{"m":"big-meta"},"_meta":{"n":` + big + `}}}`, "13", codeInvalidRequest},
		{"2^53 as the id", `{"jsonrpc":"2.0","id":` + big + `,"method":"tools/call","params":{"name":"echo","arguments":{"m":"big-id"}}}`, "", codeInvalidRequest},
		{"a batch", `[` + callLine("14", "echo", `{"m":"batch"}`) + `]`, "null", codeInvalidRequest},
		{"an empty batch", `[]`, "null", codeInvalidRequest},
		{"a bare value", `"tools/call"`, "null", codeInvalidRequest},
		{"not UTF-8 in the arguments", callLine("15", "echo", "{\"t\":\"\xff\xfe\",\"m\":\"not-utf8\"}"), "", codeParse},
		{"an encoded surrogate (not UTF-8)", callLine("16", "echo", "{\"t\":\"\xed\xa0\x80\",\"m\":\"utf8-surrogate\"}"), "", codeParse},
		{"an overlong encoding (not UTF-8)", callLine("17", "echo", "{\"t\":\"\xc0\xaf\",\"m\":\"utf8-overlong\"}"), "", codeParse},
		{"not JSON", `{"jsonrpc":"2.0","id":18,"method":"tools/call","params":{"name":"echo","arguments":{"m":"not-json"}}`, "", codeParse},
		{"no jsonrpc member", `{"id":19,"method":"tools/call","params":{"name":"echo","arguments":{"m":"no-version"}}}`, "", codeInvalidRequest},
		{"id null", `{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"echo","arguments":{"m":"id-null"}}}`, "", codeInvalidRequest},
		{"id an object", `{"jsonrpc":"2.0","id":{"a":1},"method":"tools/call","params":{"name":"echo","arguments":{"m":"id-object"}}}`, "", codeInvalidRequest},
		{"id a fraction", `{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"echo","arguments":{"m":"id-fraction"}}}`, "", codeInvalidRequest},
		{"id negative", `{"jsonrpc":"2.0","id":-1,"method":"tools/call","params":{"name":"echo","arguments":{"m":"id-negative"}}}`, "", codeInvalidRequest},
		{"tool name with a space", callLine("20", "echo x", `{"m":"bad-name"}`), "20", codeInvalidParams},
		{"tool name too long", callLine("21", strings.Repeat("a", 129), `{"m":"long-name"}`), "21", codeInvalidParams},
		{"params not an object", `{"jsonrpc":"2.0","id":22,"method":"tools/call","params":["echo",{"m":"params-list"}]}`, "22", codeInvalidParams},
		{"no tool name", `{"jsonrpc":"2.0","id":23,"method":"tools/call","params":{"arguments":{"m":"no-name"}}}`, "23", codeInvalidParams},
	}
	for _, c := range cases {
		x.send(c.line)
		line := x.recv()
		var m struct {
			ID    json.RawMessage `json:"id"`
			Error *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(line, &m); err != nil || m.Error == nil {
			t.Errorf("%s: want error %d, got %.300s", c.name, c.code, line)
			continue
		}
		if m.Error.Code != c.code || (c.id != "" && string(m.ID) != c.id) {
			t.Errorf("%s: got error %d for id %s, want %d for id %s", c.name, m.Error.Code, m.ID, c.code, c.id)
		}
		if extra := x.sync(c.name); len(extra) != 0 {
			t.Errorf("%s: the executor wrote more lines: %q", c.name, extra)
		}
	}
	// Lines dropped without an answer: a tools/call without an id, and a
	// notification that is not one of the protocol's own.
	for _, c := range []struct{ name, line string }{
		{"tools/call without an id", `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{"m":"no-id"}}}`},
		{"a vendor notification", `{"jsonrpc":"2.0","method":"vendor/anything","params":{"m":"vendor-notification"}}`},
	} {
		x.send(c.line)
		if extra := x.sync(c.name); len(extra) != 0 {
			t.Errorf("%s: dropped, want no answer; got %q", c.name, extra)
		}
	}
	if code := x.stop(); code != 0 {
		t.Errorf("exit code %d after the client closed", code)
	}
	for _, marker := range []string{"dup-", "big-", "batch", "not-utf8", "utf8-", "not-json", "no-version", "id-",
		"bad-name", "long-name", "params-list", "no-name", "no-id", "vendor-notification"} {
		if serverRead(t, record, `"`+marker) {
			t.Errorf("the server received a line marked %q that the executor refused", marker)
		}
	}
	if calls := serverCalls(t, record); len(calls) != 0 {
		t.Errorf("the server received tool calls: %v", calls)
	}
	es := checkRecords(t, env, record)
	if n := len(only(es, "stub")) + len(only(es, "refusal")); n != 0 {
		t.Errorf("lines the reader refused left %d records in the book", n)
	}
	if k := copyKinds(readCopy(t, env)); k["sent"] != 0 || k["denial"] != 0 {
		t.Errorf("lines the reader refused left copy lines: %v", k)
	}
}

// Refusals by rule: the client gets a tool error with red.prova/refused and
// the denial's fingerprint; the book holds that denial and the copy a
// denial line; the server never receives the call. Capitals folded into a
// duplicate are refused at the line (-32600) wherever they are, before any
// rule: nothing is sent, nothing is recorded.
func TestHostileClientRefusedByRule(t *testing.T) {
	env, record := newEnv(t, "hostile", nil)
	x := start(t, executorBin, env)
	x.initialize()
	cases := []struct {
		name, line, id, refused string
	}{
		{"amount missing", callLine("3", "order", `{"m":"amount-missing"}`), "3", "amount-unreadable"},
		{"amount not whole", callLine("4", "order", `{"total":1.5,"m":"fraction-amount"}`), "4", "amount-unreadable"},
		{"amount a text", callLine("5", "order", `{"total":"5","m":"text-amount"}`), "5", "amount-unreadable"},
		{"unlisted tool", callLine("6", "hidden", `{"m":"unlisted"}`), "6", "unlisted"},
		{"not in the slip", callLine("7", "notinslip", `{"m":"not-in-slip"}`), "7", "not-in-slip"},
	}
	denials := map[string]string{} // case → denial fingerprint
	for _, c := range cases {
		x.send(c.line)
		r := wantResult(t, x.recv(), c.id)
		if !r.IsError || !strings.HasPrefix(r.Text, "Not taken by the") {
			t.Errorf("%s: want a tool error saying it was not taken, got %+v", c.name, r)
		}
		if r.Meta["red.prova/refused"] != c.refused {
			t.Errorf("%s: red.prova/refused %v, want %s", c.name, r.Meta["red.prova/refused"], c.refused)
		}
		d, _ := r.Meta["red.prova/denial"].(string)
		if d == "" {
			t.Errorf("%s: no red.prova/denial in %v", c.name, r.Meta)
		}
		denials[c.name] = d
		if strings.Contains(r.Text, "500") || strings.Contains(r.Text, c.name) {
			t.Errorf("%s: the tool error repeats an argument value: %q", c.name, r.Text)
		}
	}
	// Capitals folded into a duplicate, beside an amount, deep, or where
	// no amount is read: refused at the line.
	for _, c := range []struct{ id, line string }{
		{"1", callLine("1", "order", `{"total":5,"TOTAL":500,"m":"fold-top"}`)},
		{"2", callLine("2", "order", `{"total":5,"x":[{"Ab":1,"aB":2}],"m":"fold-deep"}`)},
		{"9", callLine("9", "echo", `{"Ab":1,"aB":2,"m":"echo-folded"}`)},
	} {
		x.send(c.line)
		if e := wantError(t, x.recv(), c.id, codeInvalidRequest); strings.Contains(e.Message, "500") {
			t.Errorf("the refusal repeats an argument value: %q", e.Message)
		}
	}
	x.send(callLine("8", "echo", `{"m":"echo-plain"}`))
	if r := wantResult(t, x.recv(), "8"); r.IsError {
		t.Errorf("an ordinary call was refused: %+v", r)
	}
	x.stop()

	for _, marker := range []string{"fold-top", "fold-deep", "echo-folded", "amount-missing", "fraction-amount", "text-amount", "unlisted", "not-in-slip"} {
		if serverRead(t, record, marker) {
			t.Errorf("the server received the refused call marked %q", marker)
		}
	}
	if calls := serverCalls(t, record); len(calls) != 1 || calls[0].Tool != "echo" {
		t.Errorf("the server received %v, want the one echo call", calls)
	}
	es := checkRecords(t, env, record)
	refusals := map[string]bool{}
	for _, r := range only(es, "refusal") {
		refusals[r.Fingerprint] = true
	}
	for name, d := range denials {
		if !refusals[d] {
			t.Errorf("%s: the denial %s named to the client is not in the book", name, d)
		}
	}
	if k := copyKinds(readCopy(t, env)); k["denial"] != len(cases) || k["sent"] != 1 || k["receipt"] != 1 {
		t.Errorf("copy kinds %v, want %d denials, 1 sent, 1 receipt", k, len(cases))
	}
}

// Ids that collide with calls in flight: a ping, a second tools/call and a
// request whose id looks like the executor's own, all under ids in use; the
// client's forged response for a call in flight. Every answer reaches the
// client under its own id, the server sees only the executor's ids, and
// every call gets its receipt.
func TestHostileClientCollidingIDs(t *testing.T) {
	env, record := newEnv(t, "hostile", nil)
	x := start(t, executorBin, env)
	x.initialize()

	x.send(callLine("30", "slow", `{"ms":600,"m":"first-30"}`))
	x.send(`{"jsonrpc":"2.0","id":30,"method":"ping"}`)
	x.send(callLine("30", "slow", `{"ms":100,"m":"second-30"}`))
	x.send(`{"jsonrpc":"2.0","id":"provared-1-AAAAAAAAAAAAAAAA","method":"ping"}`)
	// A call that names an executor's call id of its own in _meta.
	x.send(`{"jsonrpc":"2.0","id":31,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{"red.prova/call-id":"provared-999-forged"}}}`)
	// The client answers "its" call itself: a response goes to the server
	// (it is the client's answer to a server's request) and never becomes
	// the call's outcome.
	x.send(`{"jsonrpc":"2.0","id":30,"result":{"content":[{"type":"text","text":"forged"}]}}`)
	x.send(`{"jsonrpc":"2.0","id":"nobody-asked","error":{"code":1,"message":"unknown"}}`)

	got := map[string]int{}
	for i := 0; i < 5; i++ {
		line := x.recv()
		m := decode(t, line)
		id, _ := json.Marshal(m["id"])
		switch {
		case bytes.Contains(line, []byte("forged")):
			t.Errorf("the client's forged answer reached the client: %s", line)
		case m["error"] != nil:
			t.Errorf("error answer: %s", line)
		}
		got[string(id)]++
	}
	if got["30"] != 3 || got[`"provared-1-AAAAAAAAAAAAAAAA"`] != 1 || got["31"] != 1 {
		t.Errorf("answers by id: %v, want three under 30, one under 31 and one under the executor-like id", got)
	}
	if extra := x.sync("after"); len(extra) != 0 {
		t.Errorf("more lines: %q", extra)
	}
	x.stop()
	calls := serverCalls(t, record)
	if len(calls) != 3 || calls[0].ID == calls[1].ID {
		t.Errorf("the server received %v, want three calls under ids of the executor's", calls)
	}
	if serverRead(t, record, "provared-999-forged") {
		t.Error("the client's own red.prova/call-id reached the server")
	}
	for _, m := range serverMetaCallIDs(t, record) {
		if m[0] != m[1] {
			t.Errorf("the server received call %s with red.prova/call-id %s", m[0], m[1])
		}
	}
	for _, r := range calls {
		if !strings.HasPrefix(r.ID, "provared-") || r.ID == "provared-1-AAAAAAAAAAAAAAAA" {
			t.Errorf("a call reached the server under an id that is not one of the executor's own: %q", r.ID)
		}
	}
	es := checkRecords(t, env, record)
	for _, c := range calls {
		s := stubsFor(es, c.ID)
		if len(s) == 1 && s[0].details()[labelToolResult] == "" {
			t.Errorf("call %s: its receipt binds no tool result: %v", c.ID, s[0].details())
		}
	}
}

// At most maxWaiting tool calls are taken at once; the rest are answered
// 1001 and never reach the server.
func TestHostileClientTooManyWaiting(t *testing.T) {
	env, record := newEnv(t, "hostile", map[string]any{"maxWaiting": 2})
	x := start(t, executorBin, env)
	x.initialize()
	for i := 1; i <= 5; i++ {
		x.send(callLine(strconv.Itoa(i), "slow", `{"ms":300,"m":"wait-`+strconv.Itoa(i)+`-"}`))
	}
	taken, refused := 0, 0
	for i := 0; i < 5; i++ {
		line := x.recv()
		var m struct {
			ID    int `json:"id"`
			Error *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("%s", line)
		}
		switch {
		case m.Error == nil:
			taken++
		case m.Error.Code == codeNotTaken:
			refused++
			if serverRead(t, record, "wait-"+strconv.Itoa(m.ID)+"-") {
				t.Errorf("call %d was answered 1001 and reached the server", m.ID)
			}
		default:
			t.Errorf("call %d: error %d", m.ID, m.Error.Code)
		}
	}
	x.stop()
	if taken != 2 || refused != 3 {
		t.Errorf("%d taken and %d answered 1001, want 2 and 3", taken, refused)
	}
	if calls := serverCalls(t, record); len(calls) != taken {
		t.Errorf("the server received %d calls, %d were taken", len(calls), taken)
	}
	checkRecords(t, env, record)
}

// Cancellations from the client: for a call with the server, the server is
// told (under the executor's id), the client gets 1002 naming the receipt,
// the receipt names the cancellation, and the late answer is dropped; a
// cancellation naming no request in flight is dropped (the server never saw
// the client's ids) and the executor stays up.
func TestHostileClientCancels(t *testing.T) {
	env, record := newEnv(t, "hostile", nil)
	x := start(t, executorBin, env)
	x.initialize()
	x.send(callLine("40", "slow", `{"ms":700}`))
	poll(t, "the server to receive the call", x.stderr, func() bool { return len(serverCalls(t, record)) > 0 })
	x.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":40,"reason":"changed my mind"}}`)
	e := wantError(t, x.recv(), "40", codeNoAnswer)
	x.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"nothing-in-flight"}}`)
	// The server's late answer comes and is dropped: the executor says so in its log.
	poll(t, "the server's late answer to be dropped", x.stderr, func() bool {
		return strings.Contains(x.ownStderr(), "a late answer to a tool call that ended")
	})
	if extra := x.sync("after"); len(extra) != 0 {
		t.Errorf("more lines reached the client: %q", extra)
	}
	x.stop()
	calls := serverCalls(t, record)
	if len(calls) != 1 {
		t.Fatalf("the server received %v", calls)
	}
	if !serverRead(t, record, `"requestId":"`+calls[0].ID+`"`) {
		t.Error("the server was not told of the cancellation under the executor's id")
	}
	if serverRead(t, record, `"requestId":"nothing-in-flight"`) || serverRead(t, record, `"requestId":40`) {
		t.Error("a cancellation naming a client's id reached the server, which never saw that id")
	}
	es := checkRecords(t, env, record)
	s := stubsFor(es, calls[0].ID)
	if len(s) != 1 || s[0].details()[labelError] != fp("no answer: the call was cancelled") {
		t.Fatalf("receipts %v, want one naming the cancellation", s)
	}
	if e.Data["red.prova/stub"] != s[0].Fingerprint {
		t.Errorf("error data %v, want the stub %s", e.Data, s[0].Fingerprint)
	}
}

// The client goes away in the middle of a call: the executor waits for the
// server's answer, writes the receipt and exits 0.
func TestHostileClientLeavesMidCall(t *testing.T) {
	env, record := newEnv(t, "hostile", nil)
	x := start(t, executorBin, env)
	x.initialize()
	x.send(callLine("1", "slow", `{"ms":300}`))
	poll(t, "the server to receive the call", x.stderr, func() bool { return len(serverCalls(t, record)) > 0 })
	if code := x.stop(); code != 0 {
		t.Errorf("exit %d after the client left", code)
	}
	es := checkRecords(t, env, record)
	calls := serverCalls(t, record)
	if s := stubsFor(es, calls[0].ID); len(s) != 1 || s[0].details()[labelToolResult] == "" {
		t.Errorf("the call the client left has receipts %v, want one binding the server's result", s)
	}
}

// SIGTERM in the middle of a call: the executor stops the server, writes
// the call's receipt and exits 143.
func TestSIGTERMMidCall(t *testing.T) {
	env, record := newEnv(t, "hostile", nil)
	x := start(t, executorBin, env)
	x.initialize()
	x.send(callLine("1", "silent", `{}`))
	poll(t, "the server to receive the call", x.stderr, func() bool { return len(serverCalls(t, record)) > 0 })
	if err := x.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := x.wait(); code != 143 {
		t.Errorf("exit %d after SIGTERM, want 143", code)
	}
	es := checkRecords(t, env, record)
	calls := serverCalls(t, record)
	if s := stubsFor(es, calls[0].ID); len(s) != 1 || s[0].details()[labelError] == "" {
		t.Errorf("the call cut short by SIGTERM has receipts %v, want one naming provared.error", s)
	}
}
