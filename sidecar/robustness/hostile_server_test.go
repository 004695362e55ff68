package robustness_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
)

// resultFP is the fingerprint of the result in one of the hostile server's
// answer lines, in the one form of RFC 8785.
func resultFP(t *testing.T, line []byte) string {
	t.Helper()
	var m struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatal(err)
	}
	f, err := canon.JCSFingerprint(m.Result)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// errorFP is the fingerprint of the error in an answer line, in the one
// form of RFC 8785.
func errorFP(t *testing.T, line string) string {
	t.Helper()
	var m struct {
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal([]byte(strings.ReplaceAll(line, "ID", "1")), &m); err != nil {
		t.Fatal(err)
	}
	f, err := canon.JCSFingerprint(m.Error)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// A hostile server that answers: its own bytes reach the client with only
// the client's id spliced in when they are one message the executor can
// read (numbers and texts RFC 8785 cannot write included); an answer that
// is not (a member named twice, bytes that are not UTF-8) reaches the
// client as error 1002 with the fixed text its receipt names. The receipt
// binds the result where it can be written in RFC 8785 form and names the
// fixed text where it cannot; a second answer, a line over 16 MiB and a
// flood on stderr are dropped or passed by, with the executor's memory
// bounded.
func TestHostileServerAnswers(t *testing.T) {
	env, record := newEnv(t, "hostile", map[string]any{"timeout": 3000})
	x := start(t, executorBin, env)
	x.initialize()
	textDoc := func(s string) [2]string { return [2]string{labelError, fp(s)} }
	cases := []struct {
		tool string
		want [2]string // the receipt's outcome label and fingerprint; zero: the result's
		why  string
		// unread: the client gets error 1002 with the text the receipt
		// names, not the server's bytes.
		unread bool
	}{
		{tool: "echo", why: "an ordinary answer, numbers spelled as the server spelled them"},
		{tool: "bignum", want: textDoc(textResultNotCanonical), why: "a whole number beyond 2^53-1 in the result"},
		{tool: "surrogate", want: textDoc(textResultNotCanonical), why: "a lone surrogate in the result"},
		{tool: "dupmember", want: textDoc(textAnswerUnreadable), why: "a member named twice in the result", unread: true},
		{tool: "badutf8", want: textDoc(textAnswerUnreadable), why: "bytes that are not UTF-8 in the result", unread: true},
		{tool: "rpcerror", want: [2]string{labelError, errorFP(t, hostileAnswers["rpcerror"])}, why: "a JSON-RPC error instead of a result"},
		{tool: "twice", why: "the call answered twice: the second answer is dropped"},
		{tool: "huge", why: "an answer of 16 MiB + 1 is dropped, the next one taken"},
		{tool: "flood", why: "16 MiB of stderr, in lines and in one line, before the answer"},
	}
	for _, c := range cases {
		id := `"srv-` + c.tool + `"`
		x.send(callLine(id, c.tool, `{}`))
		got, before := x.recvFor(id)
		if len(before) != 0 {
			t.Errorf("%s (%s): lines reached the client that are not its answer: %.400q", c.tool, c.why, before)
		}
		want := fill(hostileAnswers[c.tool], []byte(id))
		var unreadErr rpcErr
		switch {
		case c.unread:
			unreadErr = wantError(t, got, id, codeNoAnswer)
			if unreadErr.Message != textAnswerUnreadable {
				t.Errorf("%s (%s): error message %q, want the receipt's fixed text", c.tool, c.why, unreadErr.Message)
			}
		case !bytes.Equal(got, want):
			t.Errorf("%s (%s): the client got\n%.300q\nwant the server's bytes with the client's id\n%.300q", c.tool, c.why, got, want)
		}
		if extra := x.sync(c.tool); len(extra) != 0 {
			t.Errorf("%s (%s): more lines reached the client: %.300q", c.tool, c.why, extra)
		}
		if c.want == [2]string{} {
			c.want = [2]string{labelToolResult, resultFP(t, want)}
		}
		var ourID string
		for _, r := range serverCalls(t, record) {
			if r.Tool == c.tool {
				ourID = r.ID
			}
		}
		stubs := stubsFor(readBook(t, env.BookPath), ourID)
		if len(stubs) != 1 {
			t.Errorf("%s (%s): %d receipts for the call", c.tool, c.why, len(stubs))
			continue
		}
		if d := stubs[0].details(); d[c.want[0]] != c.want[1] {
			t.Errorf("%s (%s): the receipt names %v, want %s = %s", c.tool, c.why, d, c.want[0], c.want[1])
		}
		if c.unread && unreadErr.Data["red.prova/stub"] != stubs[0].Fingerprint {
			t.Errorf("%s (%s): error data %v, want red.prova/stub %s", c.tool, c.why, unreadErr.Data, stubs[0].Fingerprint)
		}
	}
	hwm := x.sampleHWM()
	stderrTotal := x.stderr.Total()
	stderr := x.stderr.String()
	if code := x.stop(); code != 0 {
		t.Errorf("exit code %d", code)
	}
	t.Logf("executor peak RSS: VmHWM %d KiB, rusage (with the server) %d KiB; stderr %d bytes", hwm, x.maxRSS, stderrTotal)
	if hwm > maxRSSKiB {
		t.Errorf("the executor's peak resident set is %d KiB after a 16 MiB + 1 answer and a stderr flood, over %d KiB", hwm, maxRSSKiB)
	}
	if !strings.Contains(stderr, "[server] eee") || !strings.Contains(stderr, " [cut]") {
		t.Errorf("the server's stderr did not come through line by line, the long line cut")
	}
	if stderrTotal > 2*int64(floodLines)<<10+1<<20 {
		t.Errorf("the executor wrote %d bytes of stderr for a flood of %d KiB in lines and one line of 16 MiB: the long line was not cut", stderrTotal, floodLines)
	}
	checkRecords(t, env, record)
}

// A hostile server that does not answer: lines that are not messages
// (garbage, a batch holding the answer, bare values, an answer naming id
// twice) never reach the client: each is dropped and logged by its size
// and SHA-256, matched with no call; the calls, and one the server never
// answers, end by the timeout with error 1002 naming the receipt, and the
// server is told each is cancelled.
func TestHostileServerNoAnswer(t *testing.T) {
	env, record := newEnv(t, "hostile", map[string]any{"timeout": 1500})
	x := start(t, executorBin, env)
	x.initialize()
	tools := []string{"nonobject", "dupid", "garbage", "silent"}
	for _, tool := range tools {
		x.send(callLine(`"srv-`+tool+`"`, tool, `{}`))
	}
	wantPassed := 0
	for _, tool := range tools {
		wantPassed += len(hostileNonMessages[tool])
	}
	var passed [][]byte
	errs := map[string]rpcErr{}
	for len(errs) < len(tools) {
		line := x.recv()
		var m struct {
			ID    json.RawMessage `json:"id"`
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal(line, &m) == nil && m.Error != nil && bytes.HasPrefix(m.ID, []byte(`"srv-`)) {
			errs[string(m.ID)] = wantError(t, line, string(m.ID), codeNoAnswer)
			continue
		}
		passed = append(passed, line)
	}
	if extra := x.sync("after"); len(extra) != 0 {
		t.Errorf("more lines: %.300q", extra)
	}
	x.stop()

	calls := serverCalls(t, record)
	ourID := map[string]string{}
	for _, c := range calls {
		ourID[c.Tool] = c.ID
	}
	if len(passed) != 0 {
		t.Errorf("the client got %d lines that are not messages, want none: %.500q", len(passed), passed)
	}
	stderr := x.stderr.String()
	for _, tool := range tools {
		for _, l := range hostileNonMessages[tool] {
			line := fill(l, []byte(`"`+ourID[tool]+`"`))
			sum := sha256.Sum256(line)
			if !strings.Contains(stderr, `"sha256":"`+hex.EncodeToString(sum[:])+`"`) {
				t.Errorf("the dropped line %q is not logged by its SHA-256", line)
			}
		}
	}
	if n := strings.Count(stderr, `"msg":"a line from the tool server is dropped"`); n != wantPassed {
		t.Errorf("%d lines logged as dropped, want %d", n, wantPassed)
	}
	es := checkRecords(t, env, record)
	for _, tool := range tools {
		e := errs[`"srv-`+tool+`"`]
		stubs := stubsFor(es, ourID[tool])
		if len(stubs) != 1 {
			t.Errorf("%s: %d receipts", tool, len(stubs))
			continue
		}
		if d := stubs[0].details(); d[labelError] != fp(textTimeout) || d[labelToolResult] != "" {
			t.Errorf("%s: the receipt names %v, want provared.error of the timeout text", tool, d)
		}
		if e.Data["red.prova/stub"] != stubs[0].Fingerprint {
			t.Errorf("%s: error data %v, want red.prova/stub %s", tool, e.Data, stubs[0].Fingerprint)
		}
		if !serverRead(t, record, `"method":"notifications/cancelled","params":{"requestId":"`+ourID[tool]+`"`) {
			t.Errorf("%s: the server was not told the call is cancelled", tool)
		}
	}
}

// The server exits in the middle of a call: the call gets its receipt
// naming the server's end, the client error 1002 naming it, and the
// executor exits with the server's code.
func TestHostileServerExitsMidCall(t *testing.T) {
	env, record := newEnv(t, "hostile", nil)
	x := start(t, executorBin, env)
	x.initialize()
	x.send(callLine(`"srv-exit"`, "exit", `{}`))
	e := wantError(t, x.recv(), `"srv-exit"`, codeNoAnswer)
	if code := x.wait(); code != hostileExitAt {
		t.Errorf("the executor exited with %d, want the server's %d", code, hostileExitAt)
	}
	calls := serverCalls(t, record)
	if len(calls) != 1 {
		t.Fatalf("the server received %v", calls)
	}
	es := checkRecords(t, env, record)
	stubs := stubsFor(es, calls[0].ID)
	if len(stubs) != 1 {
		t.Fatalf("%d receipts", len(stubs))
	}
	if d := stubs[0].details(); d[labelError] != fp(textServerEnded) {
		t.Errorf("the receipt names %v, want provared.error of the server-ended text", d)
	}
	if e.Data["red.prova/stub"] != stubs[0].Fingerprint {
		t.Errorf("error data %v, want red.prova/stub %s", e.Data, stubs[0].Fingerprint)
	}
	// The next start is clean.
	x2 := start(t, executorBin, env)
	x2.initialize()
	x2.send(callLine("1", "echo", `{}`))
	wantResult(t, x2.recv(), "1")
	if code := x2.stop(); code != 0 {
		t.Errorf("second run exit %d", code)
	}
	checkRecords(t, env, record)
}
