package robustness_test

import (
	"testing"

	"github.com/seed-6e06167c/mcp-executor/copylog"
)

// pointAfterAnswerSent is the kill point after a call's answer went to the
// client and before the copy's receipt line, which is off the answer's
// path (see copylog's package doc).
const pointAfterAnswerSent = "after-answer-sent"

// Kill -9 after the client has its answer and before the copy's receipt
// line is written: the stub is durable and answered; the restart finds it
// in the book and writes only a late-receipt line to the copy — no second
// stub, nothing sent again — and compare and verify still pass. For a
// second call in flight with it, nothing is lost either (restartAndCheck).
func TestKillAfterAnswerBeforeReceiptLine(t *testing.T) {
	needFaultBuild(t)
	env, record := newEnv(t, "sdk", nil)
	x := start(t, faultBin, env, faultEnv+"="+pointAfterAnswerSent)
	x.initialize()
	x.send(callLine("1", "echo", `{"m":"answered-then-killed"}`))
	wantResult(t, x.recv(), "1")
	wantKilled(t, x, pointAfterAnswerSent)

	lines := readCopy(t, env)
	sent := sentCalls(lines)
	stubs := only(readBook(t, env.BookPath), "stub")
	if len(sent) != 1 || len(stubs) != 1 || copyKinds(lines)[copylog.KindReceipt] != 0 {
		t.Fatalf("killed after the answer: sent %v, %d stubs, copy %v; want 1, 1 and no receipt line", sent, len(stubs), copyKinds(lines))
	}
	if received := serverCalls(t, record); len(received) != 1 {
		t.Fatalf("the server received %v", received)
	}

	es := restartAndCheck(t, env, record)
	got := stubsFor(es, sent[0])
	if len(got) != 1 || got[0].Fingerprint != stubs[0].Fingerprint {
		t.Fatalf("after the restart the answered call has %d stubs; want the one written before the kill", len(got))
	}
	if d := got[0].details(); d[labelToolResult] == "" || d[labelWrittenLate] != "" {
		t.Errorf("the answered call's stub names %v; want the tool result and no executor.written-late", d)
	}
	late := 0
	for _, l := range readCopy(t, env) {
		if l.Kind == copylog.KindLateReceipt && l.Call == sent[0] && l.Stub == stubs[0].Fingerprint {
			late++
		}
	}
	if late != 1 {
		t.Errorf("%d late-receipt lines name the answered call and its stub; want 1", late)
	}
}
