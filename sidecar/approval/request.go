package approval

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// MetaApproval is the _meta member of a tools/call that names a request by
// its id, and of the "waiting" tool result that gives the id.
const MetaApproval = wire.MetaApproval

// Request is one call held for a person's approval: single use, bound to one
// tool, one set of arguments, one amount and one slip, until ExpiresAt.
type Request struct {
	ID          string // canon.NewID: 16 random bytes, base64url
	Call        string // the executor's call id of the call held first
	Tool        string
	Action      string
	Amount      *record.Amount // nil when the action has no amount
	Slip        string         // the slip's fingerprint
	Arguments   string         // fingerprint of the arguments in RFC 8785 form
	Binding     string         // copylog.Binding of the above
	RequestedAt time.Time      // to the millisecond
	ExpiresAt   time.Time      // to the millisecond

	// Shown are the arguments with secret-looking values redacted, for a
	// person to read; nil for a request restored from the copy at a start
	// (the copy holds only the fingerprint).
	Shown json.RawMessage

	// Prepared is the Provared approval prepared for the call (the challenge
	// the person's passkey must sign), from [Call.Prepared]; nil when the
	// call needs no passkey approval, and for a restored request.
	Prepared *slip.Prepared
}

// Restored reports whether the request was rebuilt from the copy at a start.
func (r *Request) Restored() bool { return r.Shown == nil }

// Call is a call held for approval, as the engine gives it to [Hub.Hold].
type Call struct {
	CallID    string // the executor's call id
	Tool      string
	Action    string
	Amount    *record.Amount // nil when none
	Slip      string         // the slip's fingerprint
	Arguments []byte         // the call's arguments as sent ("{}" where there are none)
	// Named is the request id the call names in _meta["red.prova/approval"],
	// "" when none.
	Named string
	// Timeout is how long a new request waits (settings ApprovalTimeout).
	Timeout time.Duration
	// Channels are the call's own channels besides the hub's, such as
	// elicitation to the call's client when it declared the capability.
	Channels []Channel
	// Prepared, optional, is the Provared approval the slip asks for, as
	// consent.PrepareApproval builds it for the call's stub: channels that
	// take a passkey-signed answer (the person's page) publish it.
	Prepared *slip.Prepared
	// NoWait returns Pending at once while the request is undecided: for a
	// 2026-07-28 client, answered with [InputRequiredResult] and retried
	// with the answer in inputResponses ([InputAnswer]).
	NoWait bool
}

// fingerprint returns the fingerprint of the call's arguments and its binding.
func (c *Call) fingerprint() (args, binding string, err error) {
	raw := c.Arguments
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	args, err = canon.JCSFingerprint(raw)
	if err != nil {
		return "", "", fmt.Errorf("approval: the arguments of call %s have no RFC 8785 form: %w", c.CallID, err)
	}
	return args, copylog.Binding(c.Tool, c.Action, args, c.Amount, c.Slip), nil
}

// Answer is a person's yes or no to one request, as a channel took it.
type Answer struct {
	Request  string    // the request's id
	Approved bool      // true: yes; false: no
	Channel  string    // the channel's name
	Who      string    // who answered, as the channel knows it (never empty)
	When     time.Time // when the channel took it; zero means now
	// Record is a passkey-signed Provared approval, from a channel whose
	// answer is one (the person's page); nil otherwise. The engine puts it
	// on the stub's book line. It is not part of the copy's answer line.
	Record *record.Record
}

func answerText(approved bool) string {
	if approved {
		return copylog.AnswerApproved
	}
	return copylog.AnswerDeclined
}

func requestLine(r *Request) copylog.Line {
	return copylog.Line{Kind: copylog.KindApprovalRequest, When: r.RequestedAt, Call: r.Call, Tool: r.Tool,
		Action: r.Action, Amount: r.Amount, Slip: r.Slip,
		ApprovalFields: copylog.ApprovalFields{Request: r.ID, Arguments: r.Arguments, Binding: r.Binding, Expires: r.ExpiresAt}}
}

func answerLine(r *Request, a Answer) copylog.Line {
	return copylog.Line{Kind: copylog.KindApprovalAnswer, When: a.When,
		ApprovalFields: copylog.ApprovalFields{Request: r.ID, Answer: answerText(a.Approved), Channel: a.Channel, Who: a.Who, Binding: r.Binding}}
}
