package copylog

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/receipt"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

const testRequest = "AAECAwQFBgcICQoLDA0ODw"

func approvalLines() []Line {
	bind := Binding("order_supplies", "supplies.order", fp("{}"), &record.Amount{Unit: "GBP", Value: 120}, fp("slip"))
	return []Line{
		{Kind: KindApprovalRequest, When: at, Call: "call-1", Tool: "order_supplies", Action: "supplies.order",
			Amount: &record.Amount{Unit: "GBP", Value: 120}, Slip: fp("slip"),
			ApprovalFields: ApprovalFields{Request: testRequest, Arguments: fp("{}"), Binding: bind, Expires: at.Add(2 * time.Minute)}},
		{Kind: KindApprovalAnswer, When: at.Add(time.Second),
			ApprovalFields: ApprovalFields{Request: testRequest, Answer: AnswerApproved, Channel: "queue", Who: "uid 1000 (alice)", Binding: bind}},
		{Kind: KindApprovalLate, When: at.Add(2 * time.Second),
			ApprovalFields: ApprovalFields{Request: testRequest, Answer: AnswerDeclined, Channel: "elicitation", Who: "the client"}},
		{Kind: KindApprovalUse, When: at.Add(2 * time.Second), Call: "call-1",
			ApprovalFields: ApprovalFields{Request: testRequest, Approval: fp("answer")}},
		{Kind: KindApprovalEnd, When: at.Add(3 * time.Second), Reason: EndExpired,
			ApprovalFields: ApprovalFields{Request: testRequest}},
	}
}

// TestApprovalLineLayout pins the bytes of the approval kinds and reads
// them back.
func TestApprovalLineLayout(t *testing.T) {
	checkLayout(t, "approval-kinds.jsonl", approvalLines)
}

func TestApprovalLineFaults(t *testing.T) {
	base := approvalLines()
	cases := []struct {
		name string
		edit func(ln []Line) Line
		want string
	}{
		{"request id", func(l []Line) Line { x := l[0]; x.Request = "abc"; return x }, "not an id"},
		{"arguments", func(l []Line) Line { x := l[0]; x.Arguments = "x"; return x }, "arguments is not a fingerprint"},
		{"binding", func(l []Line) Line { x := l[1]; x.Binding = ""; return x }, "binding is not a fingerprint"},
		{"answer", func(l []Line) Line { x := l[1]; x.Answer = "yes"; return x }, "neither approved nor declined"},
		{"channel", func(l []Line) Line { x := l[2]; x.Channel = ""; return x }, "channel is empty"},
		{"who", func(l []Line) Line { x := l[1]; x.Who = ""; return x }, "who is empty"},
		{"approval", func(l []Line) Line { x := l[3]; x.Approval = "a"; return x }, "approval is not a fingerprint"},
		{"end reason", func(l []Line) Line { x := l[4]; x.Reason = "declined"; return x }, "is not expired, burned or withdrawn"},
		{"expiry", func(l []Line) Line { x := l[0]; x.Expires = time.Time{}; return x }, "cannot be written"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ln := c.edit(base)
			if _, err := ln.body(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
	// A member of another kind on an approval line is refused when read.
	l := &Log{key: testKey, name: testName}
	b, _ := base[3].body()
	b["stub"] = fp("stub")
	enc, err := l.tagLine(b, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(enc, testKey, testName); err == nil || !strings.Contains(err.Error(), `"stub" does not belong`) {
		t.Fatalf("stranger member: %v", err)
	}
}

// TestApprovalInCopy appends the lines through a Log, reopens the copy and
// finds the answer by the fingerprint a stub would name.
func TestApprovalInCopy(t *testing.T) {
	path := tempCopy(t)
	l, err := Open(path, testKey, testName)
	if err != nil {
		t.Fatal(err)
	}
	lines := approvalLines()
	answerFP, err := AnswerFingerprint(lines[1])
	if err != nil {
		t.Fatal(err)
	}
	lines[3].Approval = answerFP
	if err := l.Append(lines...); err != nil {
		t.Fatal(err)
	}
	l.Close()
	read, err := ReadFile(path, testKey, testName)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := FindAnswer(read, answerFP)
	if !ok || got.Seq != 2 || got.Who != "uid 1000 (alice)" {
		t.Fatalf("FindAnswer: %v %+v", ok, got)
	}
	if again, _ := AnswerFingerprint(got); again != answerFP {
		t.Fatalf("fingerprint after reading %s, before %s", again, answerFP)
	}
	if _, ok := FindAnswer(read, fp("other")); ok {
		t.Fatal("found an answer for a fingerprint no line has")
	}
	if _, err := AnswerFingerprint(read[0]); err == nil {
		t.Fatal("a request line made an answer document")
	}

	stub := func(line int, approval, call string) BookEntry {
		return BookEntry{Line: line, Kind: EntryStub, Details: map[string]string{receipt.LabelApproval: approval, receipt.LabelCall: canon.Fingerprint([]byte(call))}}
	}
	declined := lines[1]
	declined.Answer = AnswerDeclined
	declinedFP, _ := AnswerFingerprint(declined)
	read = append(read, declined)
	book := BookView{Entries: []BookEntry{
		stub(1, answerFP, "call-1"),
		stub(2, fp("nothing"), "call-2"),
		stub(3, answerFP, "call-9"),
		stub(4, declinedFP, "call-1"),
		{Line: 5, Kind: EntryStub, Details: map[string]string{receipt.LabelCall: fp("call-5")}},
	}}
	probs := ApprovalProblems(read, book)
	want := []string{
		"book line 2: the stub names an approval the copy does not hold",
		"book line 3: the copy has no use of the approval by this call",
		"book line 4: the stub names an answer that declined",
	}
	if !reflect.DeepEqual(probs, want) {
		t.Fatalf("problems:\n%q\nwant\n%q", probs, want)
	}
}

func TestBindingDiffers(t *testing.T) {
	a := &record.Amount{Unit: "GBP", Value: 1}
	base := Binding("t", "a.b", fp("{}"), a, fp("slip"))
	for name, other := range map[string]string{
		"tool":      Binding("u", "a.b", fp("{}"), a, fp("slip")),
		"action":    Binding("t", "a.c", fp("{}"), a, fp("slip")),
		"arguments": Binding("t", "a.b", fp("{\"x\":1}"), a, fp("slip")),
		"amount":    Binding("t", "a.b", fp("{}"), &record.Amount{Unit: "GBP", Value: 2}, fp("slip")),
		"no amount": Binding("t", "a.b", fp("{}"), nil, fp("slip")),
		"slip":      Binding("t", "a.b", fp("{}"), a, fp("slip2")),
	} {
		if other == base {
			t.Errorf("binding ignores the %s", name)
		}
	}
	if Binding("t", "a.b", fp("{}"), &record.Amount{Unit: "GBP", Value: 1}, fp("slip")) != base {
		t.Error("binding is not stable")
	}
}
