package copylog

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/receipt"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// Kind names what a line of the copy records.
type Kind string

// The kinds of line.
const (
	KindStart       Kind = "start"        // the executor started
	KindSent        Kind = "sent"         // a call is being sent to the server
	KindReceipt     Kind = "receipt"      // the call's receipt is in the book
	KindNotWritten  Kind = "not-written"  // the receipt was made but the book could not be written
	KindLateReceipt Kind = "late-receipt" // a receipt written at a restart
	KindDenial      Kind = "denial"       // a call was refused
	KindWithdrawn   Kind = "withdrawn"    // cancelled while waiting its turn; nothing sent
	// KindDenialsFolded counts refusals past the hourly number of denials: no denial is in the book
	// for them, and one line stands for all of them in an interval, so that a model that keeps asking
	// cannot grow the copy either.
	KindDenialsFolded Kind = "denials-folded"
)

// UnwrittenCap is a denial line's Unwritten when the hourly number of denials was reached. Any other
// non-empty Unwritten is why the book could not take the denial.
const UnwrittenCap = "cap"

// Line is one record of the copy. Which fields a line carries depends on its
// Kind (see the package documentation); the others stay zero. Seq, Name and
// Tag are set by [Log.Append] and by reading; When, if zero, is set by
// Append to the time of appending.
type Line struct {
	Seq  int64
	Name string
	Kind Kind
	When time.Time // to the millisecond
	// SentAt, on a sent line, is when the call was sent, to the
	// millisecond: When is the stub's time, to the second, which recovery
	// dates a late stub by. Zero on the sent lines of copies written before
	// it was kept, which then give the server's time to the second only.
	SentAt time.Time
	// Server, on a receipt line, is the call's time with the server as
	// the executor measured it (from writing the call to the server to its
	// answer, or the end it met), kept to the millisecond (serverMs); nil
	// where none was measured (copies written before it was kept).
	Server *time.Duration

	Call      string
	Tool      string
	Action    string
	Amount    *record.Amount
	Slip      string
	RequestID string
	Details   []record.Detail
	Stub      string
	Outcome   *record.Detail
	Reason    string
	Codes     []string
	Refusal   string
	Rules     string
	Rule      string
	// Unwritten, on a denial line with no refusal, says why none was written: UnwrittenCap (the hourly
	// cap) or the book's write error.
	Unwritten string
	// Count, on a denials-folded line, is how many refusals the line stands for (at least 1).
	Count int64
	// Salt, on a redaction-salt line, is the redaction salt (base64url).
	Salt string

	ApprovalFields // the members of the approval kinds (approval.go)

	Tag string
}

// MaxServerMs bounds a receipt line's serverMs: 30 days, past any call's
// timeout (at most a day), and within a time.Duration.
const MaxServerMs = 30 * 24 * 3600 * 1000

// maxDetails is the most documents a stub may name.
const maxDetails = 32

// member describes one member of a kind.
type member struct {
	name     string
	optional bool
}

// kindMembers lists, for each kind, the members it carries beyond seq, name,
// kind, when, whenMs and tag.
var kindMembers = map[Kind][]member{
	KindStart:         {},
	KindSent:          {{"call", false}, {"tool", false}, {"action", false}, {"amount", true}, {"slip", false}, {"requestId", false}, {"details", false}, {"sentMs", true}},
	KindReceipt:       {{"call", false}, {"stub", false}, {"outcome", false}, {"serverMs", true}},
	KindNotWritten:    {{"call", false}, {"outcome", false}, {"reason", false}},
	KindLateReceipt:   {{"call", false}, {"stub", false}},
	KindDenial:        {{"call", false}, {"tool", false}, {"action", false}, {"reason", false}, {"codes", false}, {"slip", false}, {"refusal", false}, {"rules", false}, {"rule", false}, {"unwritten", true}},
	KindWithdrawn:     {{"call", false}},
	KindDenialsFolded: {{"count", false}},
}

// body returns the line's members other than seq, name and tag as a
// canonical value, after checking that the line holds what its kind needs.
func (ln *Line) body() (map[string]any, error) {
	members, ok := kindMembers[ln.Kind]
	if !ok {
		return nil, fmt.Errorf("unknown kind %q", ln.Kind)
	}
	if ln.When.Before(time.UnixMilli(0)) || ln.When.UnixMilli() > canon.MaxSafeInt {
		return nil, fmt.Errorf("time %s cannot be written", ln.When.UTC().Format(time.RFC3339))
	}
	ms := ln.When.UnixMilli()
	b := map[string]any{
		"kind":   string(ln.Kind),
		"when":   canon.FormatTime(time.UnixMilli(ms)),
		"whenMs": ms,
	}
	for _, m := range members {
		switch m.name {
		case "call":
			b["call"] = ln.Call
		case "tool":
			b["tool"] = ln.Tool
		case "action":
			b["action"] = ln.Action
		case "amount":
			if ln.Amount != nil {
				b["amount"] = ln.Amount.Canonical()
			}
		case "slip":
			b["slip"] = ln.Slip
		case "requestId":
			b["requestId"] = ln.RequestID
		case "details":
			b["details"] = record.DetailsValue(ln.Details)
		case "stub":
			b["stub"] = ln.Stub
		case "outcome":
			if ln.Outcome == nil {
				return nil, errors.New("a " + string(ln.Kind) + " line needs an outcome")
			}
			b["outcome"] = ln.Outcome.Value()
		case "reason":
			b["reason"] = ln.Reason
		case "codes":
			codes := make([]any, len(ln.Codes))
			for i, c := range ln.Codes {
				codes[i] = c
			}
			b["codes"] = codes
		case "refusal":
			b["refusal"] = ln.Refusal
		case "rules":
			b["rules"] = ln.Rules
		case "rule":
			b["rule"] = ln.Rule
		case "unwritten":
			if ln.Unwritten != "" {
				b["unwritten"] = ln.Unwritten
			}
		case "count":
			b["count"] = ln.Count
		case "sentMs":
			if !ln.SentAt.IsZero() {
				b["sentMs"] = ln.SentAt.UnixMilli()
			}
		case "serverMs":
			if ln.Server != nil {
				b["serverMs"] = ln.Server.Milliseconds()
			}
		case "salt":
			b["salt"] = ln.Salt
		default:
			approvalBody(ln, m.name, b)
		}
	}
	if err := checkFields(ln); err != nil {
		return nil, err
	}
	return b, nil
}

// checkFields checks the values of a line's kind members.
func checkFields(ln *Line) error {
	for _, m := range kindMembers[ln.Kind] {
		var err error
		switch m.name {
		case "call":
			err = nonEmpty("call", ln.Call)
		case "tool":
			err = nonEmpty("tool", ln.Tool)
		case "action":
			err = nonEmpty("action", ln.Action)
		case "amount":
			if ln.Amount != nil {
				if err = nonEmpty("amount unit", ln.Amount.Unit); err == nil && (ln.Amount.Value < 0 || ln.Amount.Value > canon.MaxSafeInt) {
					err = errors.New("amount value must be a whole number from 0 to 2^53-1")
				}
			}
		case "slip":
			err = fingerprint("slip", ln.Slip)
		case "requestId":
			err = nonEmpty("requestId", ln.RequestID)
		case "details":
			if len(ln.Details) > maxDetails {
				err = fmt.Errorf("details name %d documents, at most %d", len(ln.Details), maxDetails)
			}
			for _, d := range ln.Details {
				if err == nil {
					err = nonEmpty("detail name", d.Name)
				}
				if err == nil {
					err = fingerprint("detail "+d.Name, d.SHA256)
				}
			}
		case "stub":
			err = fingerprint("stub", ln.Stub)
		case "outcome":
			if ln.Outcome.Name != receipt.LabelToolResult && ln.Outcome.Name != receipt.LabelError {
				err = fmt.Errorf("outcome name %q is neither %s nor %s", ln.Outcome.Name, receipt.LabelToolResult, receipt.LabelError)
			} else {
				err = fingerprint("outcome", ln.Outcome.SHA256)
			}
		case "reason":
			if err = nonEmpty("reason", ln.Reason); err == nil {
				err = checkApprovalField(ln, m.name)
			}
		case "refusal":
			err = fingerprintOrEmpty("refusal", ln.Refusal)
		case "rules":
			err = fingerprintOrEmpty("rules", ln.Rules)
		case "rule":
			err = fingerprintOrEmpty("rule", ln.Rule)
		case "unwritten":
			if ln.Unwritten != "" && ln.Refusal != "" {
				err = errors.New("a denial line names a refusal and why none was written")
			}
		case "count":
			if ln.Count < 1 || ln.Count > canon.MaxSafeInt {
				err = errors.New("count must be a whole number from 1 to 2^53-1")
			}
		case "sentMs":
			if !ln.SentAt.IsZero() && (ln.SentAt.Before(time.UnixMilli(0)) || ln.SentAt.UnixMilli() > canon.MaxSafeInt) {
				err = errors.New("sentMs must be a whole number of milliseconds from 0 to 2^53-1")
			}
		case "serverMs":
			if ln.Server != nil && (*ln.Server < 0 || ln.Server.Milliseconds() > MaxServerMs) {
				err = fmt.Errorf("serverMs must be a whole number of milliseconds from 0 to %d", int64(MaxServerMs))
			}
		case "salt":
			err = checkSalt(ln.Salt)
		default:
			err = checkApprovalField(ln, m.name)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func nonEmpty(what, s string) error {
	if s == "" {
		return fmt.Errorf("%s is empty", what)
	}
	return nil
}

func fingerprint(what, s string) error {
	if !canon.IsFingerprint(s) {
		return fmt.Errorf("%s is not a fingerprint", what)
	}
	return nil
}

func fingerprintOrEmpty(what, s string) error {
	if s == "" {
		return nil
	}
	return fingerprint(what, s)
}

// decodeLine turns a parsed, tag-checked object into a Line, refusing
// members that are not its kind's and values of the wrong form.
func decodeLine(obj map[string]any) (Line, error) {
	var ln Line
	kind, err := str(obj, "kind")
	if err != nil {
		return ln, err
	}
	ln.Kind = Kind(kind)
	members, ok := kindMembers[ln.Kind]
	if !ok {
		return ln, fmt.Errorf("unknown kind %q", kind)
	}
	if err := checkMembers(obj, kind, members); err != nil {
		return ln, err
	}
	if err := decodeCommon(obj, &ln); err != nil {
		return ln, err
	}
	if err := decodeKindMembers(obj, members, &ln); err != nil {
		return ln, err
	}
	if err := checkFields(&ln); err != nil {
		return ln, err
	}
	return ln, nil
}

// allowedMembers is, for each kind, the members its lines may hold: those
// of every line and the kind's own (made once, after every init has filled
// kindMembers).
var allowedMembers = sync.OnceValue(func() map[Kind]map[string]bool {
	out := make(map[Kind]map[string]bool, len(kindMembers))
	for kind, members := range kindMembers {
		allowed := map[string]bool{"seq": true, "name": true, "kind": true, "when": true, "whenMs": true, "tag": true}
		for _, m := range members {
			allowed[m.name] = true
		}
		out[kind] = allowed
	}
	return out
})

// checkMembers confirms that obj holds every member its kind needs and no
// member that is not its kind's.
func checkMembers(obj map[string]any, kind string, members []member) error {
	allowed := allowedMembers()[Kind(kind)]
	for _, m := range members {
		if _, present := obj[m.name]; !present && !m.optional {
			return fmt.Errorf("member %s is missing", m.name)
		}
	}
	for k := range obj {
		if !allowed[k] {
			return fmt.Errorf("member %q does not belong to a %s line", k, kind)
		}
	}
	return nil
}

// decodeCommon reads the members every line holds: seq, name, tag and the
// time (when and whenMs, which must agree).
func decodeCommon(obj map[string]any, ln *Line) error {
	var err error
	if ln.Seq, err = num(obj, "seq"); err != nil {
		return err
	}
	if ln.Name, err = str(obj, "name"); err != nil {
		return err
	}
	if ln.Tag, err = str(obj, "tag"); err != nil {
		return err
	}
	ms, err := num(obj, "whenMs")
	if err != nil {
		return err
	}
	when, err := str(obj, "when")
	if err != nil {
		return err
	}
	ln.When = time.UnixMilli(ms).UTC()
	if canon.FormatTime(ln.When) != when {
		return errors.New("when and whenMs name different times")
	}
	return nil
}

// decodeKindMembers reads the members of the line's kind that are present.
func decodeKindMembers(obj map[string]any, members []member, ln *Line) error {
	var err error
	for _, m := range members {
		if _, present := obj[m.name]; !present {
			continue
		}
		switch m.name {
		case "call":
			ln.Call, err = str(obj, m.name)
		case "tool":
			ln.Tool, err = str(obj, m.name)
		case "action":
			ln.Action, err = str(obj, m.name)
		case "slip":
			ln.Slip, err = str(obj, m.name)
		case "requestId":
			ln.RequestID, err = str(obj, m.name)
		case "stub":
			ln.Stub, err = str(obj, m.name)
		case "reason":
			ln.Reason, err = str(obj, m.name)
		case "refusal":
			ln.Refusal, err = str(obj, m.name)
		case "rules":
			ln.Rules, err = str(obj, m.name)
		case "rule":
			ln.Rule, err = str(obj, m.name)
		case "unwritten":
			ln.Unwritten, err = str(obj, m.name)
		case "count":
			ln.Count, err = num(obj, m.name)
		case "sentMs":
			var ms int64
			ms, err = num(obj, m.name)
			ln.SentAt = time.UnixMilli(ms).UTC()
		case "serverMs":
			var ms int64
			if ms, err = num(obj, m.name); err == nil && ms <= MaxServerMs {
				d := time.Duration(ms) * time.Millisecond
				ln.Server = &d
			} else if err == nil {
				err = fmt.Errorf("serverMs must be a whole number of milliseconds from 0 to %d", int64(MaxServerMs))
			}
		case "salt":
			ln.Salt, err = str(obj, m.name)
		case "amount":
			ln.Amount, err = decodeAmount(obj[m.name])
		case "outcome":
			var d record.Detail
			d, err = decodeDetail(obj[m.name], "outcome")
			ln.Outcome = &d
		case "details":
			ln.Details, err = decodeDetails(obj[m.name])
		case "codes":
			ln.Codes, err = decodeCodes(obj[m.name])
		default:
			err = decodeApprovalMember(ln, obj, m.name)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func str(obj map[string]any, key string) (string, error) {
	s, ok := obj[key].(string)
	if !ok {
		return "", fmt.Errorf("member %s must be text", key)
	}
	return s, nil
}

func num(obj map[string]any, key string) (int64, error) {
	n, ok := obj[key].(int64)
	if !ok {
		return 0, fmt.Errorf("member %s must be a whole number", key)
	}
	return n, nil
}

func decodeAmount(v any) (*record.Amount, error) {
	obj, ok := v.(map[string]any)
	if !ok || len(obj) != 2 {
		return nil, errors.New("amount must be {unit, value}")
	}
	unit, ok1 := obj["unit"].(string)
	value, ok2 := obj["value"].(int64)
	if !ok1 || !ok2 {
		return nil, errors.New("amount must be {unit (text), value (whole number)}")
	}
	return &record.Amount{Unit: unit, Value: value}, nil
}

func decodeDetail(v any, what string) (record.Detail, error) {
	obj, ok := v.(map[string]any)
	if !ok || len(obj) != 2 {
		return record.Detail{}, fmt.Errorf("%s must be {name, sha256}", what)
	}
	name, ok1 := obj["name"].(string)
	sum, ok2 := obj["sha256"].(string)
	if !ok1 || !ok2 {
		return record.Detail{}, fmt.Errorf("%s must be {name, sha256} of text", what)
	}
	return record.Detail{Name: name, SHA256: sum}, nil
}

func decodeDetails(v any) ([]record.Detail, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, errors.New("details must be a list")
	}
	out := make([]record.Detail, len(list))
	for i, e := range list {
		d, err := decodeDetail(e, "a detail")
		if err != nil {
			return nil, err
		}
		out[i] = d
	}
	return out, nil
}

func decodeCodes(v any) ([]string, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, errors.New("codes must be a list")
	}
	out := make([]string, len(list))
	for i, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil, errors.New("codes must be a list of text")
		}
		out[i] = s
	}
	return out, nil
}
