package copylog

import (
	"fmt"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// The kinds of line for calls held for a person's approval.
//
//	approval-request  call (the call that was held first), request (the
//	                  request's id), tool, action, amount (optional), slip,
//	                  arguments (RFC 8785 SHA-256 of the arguments), binding
//	                  (see [Binding]), expiresMs (whole number: when the
//	                  request expires, ms since 1970); when is requestedAt
//	approval-answer   request, answer ("approved" or "declined"), channel,
//	                  who, binding; when is the time the answer was taken.
//	                  Its [AnswerFingerprint] is what an approved stub names
//	                  under executor.approval
//	approval-late     request, answer, channel, who: an answer that came
//	                  after the first one (or after the end) and was not used
//	approval-use      call, request, approval (the answer's fingerprint): the
//	                  approved request let this call through; written before
//	                  the call's sent line, so a request is used at most once
//	                  even across a restart
//	approval-end      request, reason ("expired", "burned" or "withdrawn"):
//	                  the request ended with no use
const (
	KindApprovalRequest Kind = "approval-request"
	KindApprovalAnswer  Kind = "approval-answer"
	KindApprovalLate    Kind = "approval-late"
	KindApprovalUse     Kind = "approval-use"
	KindApprovalEnd     Kind = "approval-end"
)

// Answers an approval line may hold.
const (
	AnswerApproved = "approved"
	AnswerDeclined = "declined"
)

// Reasons an approval-end line may hold.
const (
	EndExpired   = "expired"
	EndBurned    = "burned"
	EndWithdrawn = "withdrawn"
)

// ApprovalFields are the members of the approval kinds, embedded in [Line].
type ApprovalFields struct {
	Request   string    // the request's id
	Arguments string    // fingerprint of the arguments, RFC 8785
	Binding   string    // fingerprint of what the approval is bound to ([Binding])
	Expires   time.Time // to the millisecond
	Answer    string    // AnswerApproved or AnswerDeclined
	Channel   string    // the channel that answered: "queue", "elicitation", "command", …
	Who       string    // who answered, as the channel knows it
	Approval  string    // on a use line: the answer's fingerprint
}

func init() {
	kindMembers[KindApprovalRequest] = []member{{"call", false}, {"request", false}, {"tool", false}, {"action", false},
		{"amount", true}, {"slip", false}, {"arguments", false}, {"binding", false}, {"expiresMs", false}}
	kindMembers[KindApprovalAnswer] = []member{{"request", false}, {"answer", false}, {"channel", false}, {"who", false}, {"binding", false}}
	kindMembers[KindApprovalLate] = []member{{"request", false}, {"answer", false}, {"channel", false}, {"who", false}}
	kindMembers[KindApprovalUse] = []member{{"call", false}, {"request", false}, {"approval", false}}
	kindMembers[KindApprovalEnd] = []member{{"request", false}, {"reason", false}}
}

// Binding is the fingerprint of what one approval is for: the tool, its
// action, the arguments' fingerprint, the amount (nil for none) and the
// slip's fingerprint, as the canonical object {"action", "amount"
// {unit, value} (absent for none), "arguments", "slip", "tool"}.
func Binding(tool, action, arguments string, amount *record.Amount, slip string) string {
	b := map[string]any{"tool": tool, "action": action, "arguments": arguments, "slip": slip}
	if amount != nil {
		b["amount"] = map[string]any{"unit": amount.Unit, "value": amount.Value}
	}
	return canon.Fingerprint(canon.MustMarshal(b))
}

// AnswerDocument is an approval-answer line as the copy holds it, without
// the members every line has (seq, name, tag): the canonical object
// {"answer", "binding", "channel", "kind", "request", "when", "whenMs",
// "who"}. It does not depend on where in the copy the line stands, so the
// fingerprint is known before the line is appended.
func AnswerDocument(ln Line) ([]byte, error) {
	if ln.Kind != KindApprovalAnswer {
		return nil, fmt.Errorf("copylog: an answer document is made from an %s line, not %s", KindApprovalAnswer, ln.Kind)
	}
	b, err := ln.body()
	if err != nil {
		return nil, fmt.Errorf("copylog: answer document: %w", err)
	}
	return canon.Marshal(b)
}

// AnswerFingerprint is canon.Fingerprint of [AnswerDocument]: the value of
// an approved stub's executor.approval detail.
func AnswerFingerprint(ln Line) (string, error) {
	doc, err := AnswerDocument(ln)
	if err != nil {
		return "", err
	}
	return canon.Fingerprint(doc), nil
}

// FindAnswer returns the approval-answer line of lines whose fingerprint is
// fp, for compare to check an approved stub.
func FindAnswer(lines []Line, fp string) (Line, bool) {
	for _, ln := range lines {
		if ln.Kind != KindApprovalAnswer {
			continue
		}
		if got, err := AnswerFingerprint(ln); err == nil && got == fp {
			return ln, true
		}
	}
	return Line{}, false
}

// ApprovalProblems checks every stub of book that names an executor.approval
// against the copy: the answer must be an approval-answer line that approved,
// and a use line must name it and the stub's call. It returns one message per
// stub that fails, naming its book line. It is Compared.Approvals of
// [CompareLines].
func ApprovalProblems(lines []Line, book BookView) []string {
	c, err := CompareLines(SliceLines(lines), book, CompareOptions{})
	if err != nil {
		return []string{err.Error()}
	}
	return c.Approvals
}

// approvalBody writes the approval member name of ln into b.
func approvalBody(ln *Line, name string, b map[string]any) {
	if p := approvalText(ln, name); p != nil {
		b[name] = *p
	} else if name == "expiresMs" {
		b[name] = ln.Expires.UnixMilli()
	}
}

// approvalText is the field of ln that holds the approval member name
// when that member is a string, or nil.
func approvalText(ln *Line, name string) *string {
	switch name {
	case "request":
		return &ln.Request
	case "arguments":
		return &ln.Arguments
	case "binding":
		return &ln.Binding
	case "answer":
		return &ln.Answer
	case "channel":
		return &ln.Channel
	case "who":
		return &ln.Who
	case "approval":
		return &ln.Approval
	}
	return nil
}

// checkApprovalField checks the value of the approval member name of ln.
func checkApprovalField(ln *Line, name string) error {
	switch name {
	case "request":
		if !canon.IsID(ln.Request) {
			return fmt.Errorf("request %q is not an id (base64url of 16 bytes)", ln.Request)
		}
	case "arguments":
		return fingerprint("arguments", ln.Arguments)
	case "binding":
		return fingerprint("binding", ln.Binding)
	case "approval":
		return fingerprint("approval", ln.Approval)
	case "expiresMs":
		if ln.Expires.Before(time.UnixMilli(0)) || ln.Expires.UnixMilli() > canon.MaxSafeInt {
			return fmt.Errorf("expiry %s cannot be written", ln.Expires.UTC().Format(time.RFC3339))
		}
	case "answer":
		if ln.Answer != AnswerApproved && ln.Answer != AnswerDeclined {
			return fmt.Errorf("answer %q is neither %s nor %s", ln.Answer, AnswerApproved, AnswerDeclined)
		}
	case "channel":
		return nonEmpty("channel", ln.Channel)
	case "who":
		return nonEmpty("who", ln.Who)
	case "reason":
		if ln.Kind == KindApprovalEnd && ln.Reason != EndExpired && ln.Reason != EndBurned && ln.Reason != EndWithdrawn {
			return fmt.Errorf("reason %q is not %s, %s or %s", ln.Reason, EndExpired, EndBurned, EndWithdrawn)
		}
	}
	return nil
}

// decodeApprovalMember reads the approval member name of obj into ln.
func decodeApprovalMember(ln *Line, obj map[string]any, name string) error {
	if p := approvalText(ln, name); p != nil {
		v, err := str(obj, name)
		*p = v
		return err
	}
	if name == "expiresMs" {
		ms, err := num(obj, name)
		ln.Expires = time.UnixMilli(ms).UTC()
		return err
	}
	return nil
}

// isApproval is whether a line of kind k belongs to an approval request.
func (k Kind) isApproval() bool {
	switch k {
	case KindApprovalRequest, KindApprovalAnswer, KindApprovalLate, KindApprovalUse, KindApprovalEnd:
		return true
	}
	return false
}
