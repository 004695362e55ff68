package copylog

import (
	"errors"
	"fmt"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
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

// Outcome document names a receipt line may carry.
const (
	OutcomeToolResult = "provared.tool-result"
	OutcomeError      = "provared.error"
)

// Detail is one document named by its label and fingerprint, as in a stub's
// details.
type Detail struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
}

// Amount is a call's amount in the slip's unit.
type Amount struct {
	Unit  string `json:"unit"`
	Value int64  `json:"value"`
}

// Line is one record of the copy. Which fields a line carries depends on its
// Kind (see the package documentation); the others stay zero. Seq, Name and
// Tag are set by [Log.Append] and by reading; When, if zero, is set by
// Append to the time of appending.
type Line struct {
	Seq  int64
	Name string
	Kind Kind
	When time.Time // to the millisecond

	Call      string
	Tool      string
	Action    string
	Amount    *Amount
	Slip      string
	RequestID string
	Details   []Detail
	Stub      string
	Outcome   *Detail
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

	Tag string
}

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
	KindSent:          {{"call", false}, {"tool", false}, {"action", false}, {"amount", true}, {"slip", false}, {"requestId", false}, {"details", false}},
	KindReceipt:       {{"call", false}, {"stub", false}, {"outcome", false}},
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
				b["amount"] = map[string]any{"unit": ln.Amount.Unit, "value": ln.Amount.Value}
			}
		case "slip":
			b["slip"] = ln.Slip
		case "requestId":
			b["requestId"] = ln.RequestID
		case "details":
			list := make([]any, len(ln.Details))
			for i, d := range ln.Details {
				list[i] = map[string]any{"name": d.Name, "sha256": d.SHA256}
			}
			b["details"] = list
		case "stub":
			b["stub"] = ln.Stub
		case "outcome":
			if ln.Outcome == nil {
				return nil, errors.New("a " + string(ln.Kind) + " line needs an outcome")
			}
			b["outcome"] = map[string]any{"name": ln.Outcome.Name, "sha256": ln.Outcome.SHA256}
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
			if ln.Outcome.Name != OutcomeToolResult && ln.Outcome.Name != OutcomeError {
				err = fmt.Errorf("outcome name %q is neither %s nor %s", ln.Outcome.Name, OutcomeToolResult, OutcomeError)
			} else {
				err = fingerprint("outcome", ln.Outcome.SHA256)
			}
		case "reason":
			err = nonEmpty("reason", ln.Reason)
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
	var err error
	kind, err := str(obj, "kind")
	if err != nil {
		return ln, err
	}
	ln.Kind = Kind(kind)
	members, ok := kindMembers[ln.Kind]
	if !ok {
		return ln, fmt.Errorf("unknown kind %q", kind)
	}
	allowed := map[string]bool{"seq": true, "name": true, "kind": true, "when": true, "whenMs": true, "tag": true}
	for _, m := range members {
		allowed[m.name] = true
		if _, present := obj[m.name]; !present && !m.optional {
			return ln, fmt.Errorf("member %s is missing", m.name)
		}
	}
	for k := range obj {
		if !allowed[k] {
			return ln, fmt.Errorf("member %q does not belong to a %s line", k, kind)
		}
	}
	if ln.Seq, err = num(obj, "seq"); err != nil {
		return ln, err
	}
	if ln.Name, err = str(obj, "name"); err != nil {
		return ln, err
	}
	if ln.Tag, err = str(obj, "tag"); err != nil {
		return ln, err
	}
	ms, err := num(obj, "whenMs")
	if err != nil {
		return ln, err
	}
	when, err := str(obj, "when")
	if err != nil {
		return ln, err
	}
	ln.When = time.UnixMilli(ms).UTC()
	if canon.FormatTime(ln.When) != when {
		return ln, errors.New("when and whenMs name different times")
	}
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
		case "amount":
			ln.Amount, err = decodeAmount(obj[m.name])
		case "outcome":
			var d Detail
			d, err = decodeDetail(obj[m.name], "outcome")
			ln.Outcome = &d
		case "details":
			ln.Details, err = decodeDetails(obj[m.name])
		case "codes":
			ln.Codes, err = decodeCodes(obj[m.name])
		}
		if err != nil {
			return ln, err
		}
	}
	if err := checkFields(&ln); err != nil {
		return ln, err
	}
	return ln, nil
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

func decodeAmount(v any) (*Amount, error) {
	obj, ok := v.(map[string]any)
	if !ok || len(obj) != 2 {
		return nil, errors.New("amount must be {unit, value}")
	}
	unit, ok1 := obj["unit"].(string)
	value, ok2 := obj["value"].(int64)
	if !ok1 || !ok2 {
		return nil, errors.New("amount must be {unit (text), value (whole number)}")
	}
	return &Amount{Unit: unit, Value: value}, nil
}

func decodeDetail(v any, what string) (Detail, error) {
	obj, ok := v.(map[string]any)
	if !ok || len(obj) != 2 {
		return Detail{}, fmt.Errorf("%s must be {name, sha256}", what)
	}
	name, ok1 := obj["name"].(string)
	sum, ok2 := obj["sha256"].(string)
	if !ok1 || !ok2 {
		return Detail{}, fmt.Errorf("%s must be {name, sha256} of text", what)
	}
	return Detail{Name: name, SHA256: sum}, nil
}

func decodeDetails(v any) ([]Detail, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, errors.New("details must be a list")
	}
	out := make([]Detail, len(list))
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
