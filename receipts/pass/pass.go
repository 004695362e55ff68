package pass

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
)

// MaxDepth is the most passes in a row (§25): a pass that would be the
// eleventh is the problem "pass-too-deep", whatever the slip allows.
const MaxDepth = 10

// Type is the content type of a pass.
const Type = "provared.pass.v0"

// Helper is the helper agent a pass names in "to".
type Helper struct {
	Name string
	Keys jwk.KeySet
}

// Pass is a pass's content, read.
type Pass struct {
	// Content is the content as read (a canonical value).
	Content map[string]any
	ID      string
	Slip    string // the slip's fingerprint
	// From is the pass its writer acts under; "" when the writer is the
	// slip's own agent.
	From       string
	To         Helper
	Actions    []string
	Limits     []slip.Limit
	ValidFrom  time.Time
	ValidUntil time.Time
	When       time.Time
}

var (
	required = []string{"actions", "id", "limits", "slip", "to", "type", "validFrom", "validUntil", "when"}
	optional = []string{"from"}
)

// ValidateContent confirms every member of a pass's content (§25). It
// does not read "type": the envelope's check (record.Parse) confirms it.
func ValidateContent(c map[string]any) error {
	_, err := Parse(c)
	return err
}

// Parse confirms a pass's content, as ValidateContent does, and reads it.
// v is the content as a canonical value; anything but an object is
// refused.
func Parse(v any) (*Pass, error) {
	c, err := members(v, required, optional, "pass")
	if err != nil {
		return nil, err
	}
	p := &Pass{Content: c}
	if p.ID, err = textOf(c["id"], canon.IsID, "id", "a unique number of 16 bytes in base64url"); err != nil {
		return nil, err
	}
	if p.Slip, err = fingerprint(c["slip"], "slip"); err != nil {
		return nil, err
	}
	if v, ok := c["from"]; ok {
		if p.From, err = fingerprint(v, "from"); err != nil {
			return nil, err
		}
	}
	if p.To, err = readHelper(c["to"]); err != nil {
		return nil, err
	}
	if p.Actions, err = readActions(c["actions"]); err != nil {
		return nil, err
	}
	if _, p.Limits, err = slip.ValidateLimits(p.Actions, c["limits"]); err != nil {
		return nil, err
	}
	if p.ValidFrom, err = timeOf(c["validFrom"], "validFrom"); err != nil {
		return nil, err
	}
	if p.ValidUntil, err = timeOf(c["validUntil"], "validUntil"); err != nil {
		return nil, err
	}
	if !p.ValidFrom.Before(p.ValidUntil) {
		return nil, fail("validUntil", "must be later than validFrom")
	}
	if p.When, err = timeOf(c["when"], "when"); err != nil {
		return nil, err
	}
	return p, nil
}

func readHelper(v any) (Helper, error) {
	to, err := members(v, []string{"keys", "name"}, nil, "to")
	if err != nil {
		return Helper{}, err
	}
	var h Helper
	name, ok := to["name"].(string)
	if n := canon.Chars(name); !ok || n < 1 || n > 200 {
		return Helper{}, fail("to.name", "must be text of 1 to 200 characters")
	}
	h.Name = name
	if h.Keys, err = jwk.CheckKeySetAt(to["keys"], "to.keys"); err != nil {
		return Helper{}, err
	}
	return h, nil
}

// readActions reads "actions": 1 to 64 action names, none repeated.
func readActions(v any) ([]string, error) {
	list, ok := v.([]any)
	if !ok || len(list) < 1 || len(list) > 64 {
		return nil, fail("actions", "must be a list of 1 to 64 items")
	}
	out := make([]string, 0, len(list))
	for i, a := range list {
		path := fmt.Sprintf("actions[%d]", i)
		name, ok := a.(string)
		if !ok || !record.IsShortName(name) {
			return nil, fail(path, "must be 1 to 64 lower-case letters, digits, full stops, hyphens or underscores")
		}
		if record.IsUnknownReserved(name) {
			return nil, fail(path, `names that begin "provared." are reserved, and this one is not on the shared list`)
		}
		out = append(out, name)
	}
	seen := make(map[string]bool, len(out))
	for _, a := range out {
		if seen[a] {
			return nil, fail("actions", "an action name is repeated")
		}
		seen[a] = true
	}
	return out, nil
}

func fail(path, format string, a ...any) error {
	return problem.New(record.CodeBadField, "%s: %s", path, fmt.Sprintf(format, a...))
}

// members confirms that v is an object holding every required member (in
// their order) and nothing that is neither required nor optional.
func members(v any, required, optional []string, path string) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok || m == nil {
		return nil, fail(path, "must be an object")
	}
	for _, name := range required {
		if _, ok := m[name]; !ok {
			return nil, fail(path, "%q is missing", name)
		}
	}
	for name := range m {
		if !slices.Contains(required, name) && !slices.Contains(optional, name) {
			return nil, fail(path, "holds a member that is not known")
		}
	}
	return m, nil
}

func textOf(v any, ok func(string) bool, path, what string) (string, error) {
	s, isText := v.(string)
	if !isText || !ok(s) {
		return "", fail(path, "must be %s", what)
	}
	return s, nil
}

func fingerprint(v any, path string) (string, error) {
	return textOf(v, canon.IsFingerprint, path, "a SHA-256 fingerprint in base64url")
}

func timeOf(v any, path string) (time.Time, error) {
	if s, ok := v.(string); ok {
		if t, ok := canon.ParseTime(s); ok {
			return t, nil
		}
	}
	return time.Time{}, fail(path, "must be a time written as YYYY-MM-DDTHH:MM:SSZ")
}

// Fields are what a writer puts into a pass.
type Fields struct {
	ID   string // "" for a new one
	Slip string // the slip's fingerprint
	// From is the pass the writer itself acts under; "" when the writer is
	// the slip's own agent.
	From       string
	To         Helper
	Actions    []string
	Limits     []slip.Limit
	ValidFrom  time.Time
	ValidUntil time.Time
	When       time.Time // zero: now
}

// Content is the pass's content, as the reference's writePass builds it.
func (f Fields) Content() map[string]any {
	id := f.ID
	if id == "" {
		id = canon.NewID()
	}
	when := f.When
	if when.IsZero() {
		when = time.Now()
	}
	actions := make([]any, len(f.Actions))
	for i, a := range f.Actions {
		actions[i] = a
	}
	limits := make([]any, len(f.Limits))
	for i, l := range f.Limits {
		limits[i] = slip.LimitValue(l)
	}
	c := map[string]any{
		"type":       Type,
		"id":         id,
		"slip":       f.Slip,
		"to":         map[string]any{"keys": f.To.Keys.Value(), "name": f.To.Name},
		"actions":    actions,
		"limits":     limits,
		"validFrom":  canon.FormatTime(f.ValidFrom),
		"validUntil": canon.FormatTime(f.ValidUntil),
		"when":       canon.FormatTime(when),
	}
	if f.From != "" {
		c["from"] = f.From
	}
	return c
}

// Sign writes the pass and signs it with writer, the key set of the agent
// that passes on: the slip's agent, or the helper of the pass named in
// From. Nothing here knows whose keys those must be; the book's checker
// holds them against the slip and the pass above.
func (f Fields) Sign(ctx context.Context, writer jwk.Signer) (*record.Record, error) {
	return Sign(ctx, f.Content(), writer)
}

// Sign writes a pass of the given content (confirmed first, "type"
// included) signed with writer's key set.
func Sign(ctx context.Context, content map[string]any, writer jwk.Signer) (*record.Record, error) {
	s, err := record.SignWith(ctx, record.Pass, content, ValidateContent, writer)
	if err != nil {
		return nil, err
	}
	return s.Record(), nil
}

// Prepare confirms and writes a pass's content before it is signed, as
// record.Prepare does for the other hybrid kinds: its fingerprint is known
// before any signature.
func Prepare(content map[string]any) (record.Prepared, error) {
	return record.PrepareWith(record.Pass, content, ValidateContent)
}

// Read reads a pass record as handed over (a canonical value: the JWS
// envelope): the envelope with the reference's checks and codes, then the
// content. Its signatures are not checked here: whose keys they must fit
// is known only against the slip and the book (see receipts/book).
func Read(v any) (*record.Record, *Pass, error) {
	rec, err := record.Parse(v, record.Pass)
	if err != nil {
		return nil, nil, err
	}
	p, err := Parse(rec.Content)
	if err != nil {
		return rec, nil, err
	}
	return rec, p, nil
}

// ReadText reads a pass record from its JSON text (a file an agent hands
// over): the text must be the record in canonical JSON, as a book line
// holds it (a line feed after it is allowed).
func ReadText(text []byte) (*record.Record, *Pass, error) {
	if n := len(text); n > 0 && text[n-1] == '\n' {
		text = text[:n-1]
	}
	if len(text) > record.MaxRecordSize*2 {
		return nil, nil, problem.New(record.CodeTooLarge, "the pass is larger than a record may be")
	}
	v, err := canon.Parse(text)
	if err != nil {
		return nil, nil, err
	}
	return Read(v)
}
