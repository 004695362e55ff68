package slip

import (
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// Slip is a slip's content, read and validated (format description, section
// 4.1), with its record. Covered fields that were not revealed are empty
// strings and are listed in Covered.
type Slip struct {
	Record      *record.Record
	Fingerprint string // of the content as signed (covered form)
	ID          string
	Issuer      Issuer
	Agent       Agent
	Actions     []string
	Limits      []Limit
	Requires    []Condition
	Never       []string
	With        []Service
	Passes      int64 // 0: the permission may not be passed on
	ValidFrom   time.Time
	ValidUntil  time.Time
	Purpose     string
	// Content is the content with every revealed field back in place and
	// "_sd"/"_sd_alg" removed (the form the reference reports).
	Content map[string]any
	// Covered names the fields still covered, e.g. "issuer.name".
	Covered []string
}

// Issuer is the person's passkey and where it is used.
type Issuer struct {
	Key    *jwk.Key
	Name   string
	Origin string
	RPID   string
}

// Agent is the agent the slip is for.
type Agent struct {
	Keys     jwk.KeySet
	Name     string
	Software []Software
}

// Software is a statement of what the agent runs; nothing checks it.
type Software struct {
	Name   string
	SHA256 string
}

// Limit is one limit: Kind "max" (sum of amounts), "each" (one amount) or
// "count" (number of stubs); Per is a period in seconds, 0 for none; Unit
// is empty for a count.
type Limit struct {
	Action string
	Kind   string
	Value  int64
	Per    int64
	Unit   string
}

// Condition is one of "requires": Need is "countersignature" or "approval";
// Action "" means every action; Above (with Unit) limits it to amounts
// strictly greater.
type Condition struct {
	Need   string
	Action string
	Above  *int64
	Unit   string
}

// Service is one of "with". Keys is nil for a service that cannot
// countersign.
type Service struct {
	ID   string
	Name string
	Keys *jwk.KeySet
}

// Allows reports whether action is one of the slip's actions.
func (s *Slip) Allows(action string) bool {
	for _, a := range s.Actions {
		if a == action {
			return true
		}
	}
	return false
}

// Service finds a service by id.
func (s *Slip) Service(id string) (*Service, bool) {
	for i := range s.With {
		if s.With[i].ID == id {
			return &s.With[i], true
		}
	}
	return nil, false
}

// Forbids reports whether the slip's "never" list forbids the kind of a
// shared action.
func (s *Slip) Forbids(action string) bool {
	kind, ok := ActionKind(action)
	if !ok {
		return false
	}
	for _, n := range s.Never {
		if n == kind {
			return true
		}
	}
	return false
}

// ValidAt reports validFrom <= t < validUntil.
func (s *Slip) ValidAt(t time.Time) bool {
	return !t.Before(s.ValidFrom) && t.Before(s.ValidUntil)
}

// LimitValue writes a limit as the canonical value a slip or a pass holds:
// {action, max|each|count, per?, unit?}.
func LimitValue(l Limit) map[string]any {
	m := map[string]any{"action": l.Action, l.Kind: l.Value}
	if l.Per > 0 {
		m["per"] = l.Per
	}
	if l.Kind != "count" {
		m["unit"] = l.Unit
	}
	return m
}
