package contentrules

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
)

// Limits of a rules file.
const (
	MaxFileSize     = 1 << 20 // bytes
	MaxRules        = 1000
	MaxPatternParts = 20000 // in all the file's patterns
	MaxNameChars    = 200
	MaxTools        = 64 // names in one rule's tool list
	MaxWhen         = 16
	MaxTests        = 64
	MaxOneOf        = 64
	MaxMatchedChars = 4096 // a longer text cannot be tested against a pattern
)

// Rules is a rules file as read: the rules in the file's order. It is
// safe for use by several goroutines at once.
type Rules struct {
	rules       []*Rule
	byTool      map[string][]*Rule
	fingerprint string
}

// Rule is one rule of the file.
type Rule struct {
	Name        string
	Fingerprint string // canon.Fingerprint of the name's UTF-8 bytes
	Tools       []string
	When        []*Condition // all must hold for the rule to apply
	Content     *Content     // nil: the tests read the arguments
	Test        []*Condition // nil: the rule refuses every call it applies to
}

// Content says where the proposed content is in the arguments.
type Content struct {
	Pointer string
	AsJSON  bool // "as": "json" (a text holding JSON); false: "value"
	ptr     pointer
}

// ConditionKind is what a condition asks of the value at its pointer.
type ConditionKind int

// The kinds of condition.
const (
	Equals  ConditionKind = iota // the value equals Value
	OneOf                        // the value equals one of Values
	Absent                       // there is no value at the pointer
	Matches                      // the value is text that matches Pattern
)

// Condition is one condition of a rule's when or test.
type Condition struct {
	Pointer  string
	Kind     ConditionKind
	Value    any   // Equals
	Values   []any // OneOf
	Pattern  string
	OrAbsent bool
	ptr      pointer
	pat      *pattern
}

// Error is a fault in a rules file. Place is where ("rules[3].test[1].oneOf";
// "" for the whole file).
type Error struct {
	File   string
	Place  string
	Reason string
}

func (e *Error) Error() string {
	s := "content rules"
	if e.File != "" {
		s += " " + e.File
	}
	s += ": "
	if e.Place != "" {
		s += e.Place + ": "
	}
	return s + e.Reason
}

// Load reads the rules file at path.
func Load(path string) (*Rules, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading content rules: %w", err)
	}
	defer func() { _ = f.Close() }() // read only: a failed close loses nothing
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading content rules %s: %w", path, err)
	}
	rs, err := Parse(data)
	if err != nil {
		if e, ok := errors.AsType[*Error](err); ok {
			e.File = path
		}
		return nil, err
	}
	return rs, nil
}

// Parse reads a rules file's bytes strictly: at most 1 MiB of UTF-8 JSON
// with no member named twice and no number beyond 2^53−1 in size,
// "version": 1, "rules": a list of at most 1,000 rules, no member that is
// not part of a rules file, a rule, a condition or a content, pointers as
// RFC 6901 writes them, at most 20,000 pattern parts in all. A fault is an
// *Error naming its place.
func Parse(data []byte) (*Rules, error) {
	if len(data) > MaxFileSize {
		return nil, &Error{Reason: fmt.Sprintf("the file is over %d bytes (1 MiB)", MaxFileSize)}
	}
	if !utf8.Valid(data) {
		off := 0
		for off < len(data) {
			r, n := utf8.DecodeRune(data[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		return nil, &Error{Reason: fmt.Sprintf("byte %d is not part of a UTF-8 character", off)}
	}
	v, rerr := readJSON(data, false, maxDepth)
	if rerr != nil {
		return nil, fileReadError(data, rerr)
	}
	top, ok := v.(*object)
	if !ok {
		return nil, &Error{Reason: "the file must hold one JSON object"}
	}
	if err := onlyMembers(top, "", "a rules file", "version", "rules"); err != nil {
		return nil, err
	}
	ver, ok := top.members["version"]
	if !ok {
		return nil, &Error{Place: "version", Reason: "is missing; write \"version\": 1"}
	}
	if f, ok := ver.(float64); !ok || f != 1 {
		return nil, &Error{Place: "version", Reason: "must be 1"}
	}
	list, ok := top.members["rules"]
	if !ok {
		return nil, &Error{Place: "rules", Reason: "is missing"}
	}
	items, ok := list.([]any)
	if !ok {
		return nil, &Error{Place: "rules", Reason: "must be a list of rules"}
	}
	if len(items) > MaxRules {
		return nil, &Error{Place: "rules", Reason: fmt.Sprintf("holds %d rules; at most %d are allowed", len(items), MaxRules)}
	}
	rs := &Rules{byTool: map[string][]*Rule{}}
	names := map[string]int{}
	parts := 0
	for i, item := range items {
		place := fmt.Sprintf("rules[%d]", i)
		r, n, err := parseRule(item, place)
		if err != nil {
			return nil, err
		}
		if j, dup := names[r.Name]; dup {
			return nil, &Error{Place: place + ".name", Reason: fmt.Sprintf("is the name of rules[%d] too; each rule needs a name of its own", j)}
		}
		names[r.Name] = i
		parts += n
		if parts > MaxPatternParts {
			return nil, &Error{Place: place, Reason: fmt.Sprintf("the patterns up to here have %d parts; at most %d are allowed in all (each character, \"?\" or run of stars counts one)", parts, MaxPatternParts)}
		}
		rs.rules = append(rs.rules, r)
		for _, t := range r.Tools {
			rs.byTool[t] = append(rs.byTool[t], r)
		}
	}
	fp, err := canon.JCSFingerprint(data)
	if err != nil {
		return nil, &Error{Reason: "the file cannot be written in the one form of RFC 8785: " + err.Error()}
	}
	rs.fingerprint = fp
	return rs, nil
}

// fileReadError names the place of a fault in the file's JSON.
func fileReadError(data []byte, e *readError) *Error {
	place := placeOf(e.path)
	var reason string
	switch e.fault {
	case faultDuplicate:
		reason = fmt.Sprintf("the member %s is named twice", strconv.Quote(e.detail))
	case faultBigNumber:
		reason = "a number beyond 9,007,199,254,740,991 in size"
	case faultBadUnicode:
		reason = "a text that is not well-formed Unicode (a lone surrogate)"
	case faultTooDeep:
		reason = e.fault.String()
	default:
		line, col := lineCol(data, e.offset)
		reason = fmt.Sprintf("not JSON at line %d, column %d: %s", line, col, e.detail)
	}
	return &Error{Place: place, Reason: reason}
}

func lineCol(data []byte, off int) (line, col int) {
	line, col = 1, 1
	for _, c := range string(data[:min(off, len(data))]) {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

// placeOf writes a path as the errors name places: rules[3].test[1].oneOf;
// a member name that is not a plain word is written ["like this"].
func placeOf(path []pathStep) string {
	var b strings.Builder
	for _, s := range path {
		switch {
		case s.index >= 0:
			fmt.Fprintf(&b, "[%d]", s.index)
		case plainWord(s.name):
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.name)
		default:
			fmt.Fprintf(&b, "[%s]", strconv.Quote(s.name))
		}
	}
	return b.String()
}

func plainWord(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// onlyMembers refuses a member of o not in allowed, naming the first one
// in the file's order. kind says what o is ("a rule", "a condition").
func onlyMembers(o *object, place, kind string, allowed ...string) error {
	for _, n := range o.names {
		if !slices.Contains(allowed, n) {
			return &Error{Place: place, Reason: fmt.Sprintf("%s is not a member of %s (allowed: %s)", strconv.Quote(n), kind, strings.Join(allowed, ", "))}
		}
	}
	return nil
}

// parseRule reads one rule; it returns the rule and its pattern parts.
func parseRule(v any, place string) (*Rule, int, error) {
	o, ok := v.(*object)
	if !ok {
		return nil, 0, &Error{Place: place, Reason: "must be an object"}
	}
	if err := onlyMembers(o, place, "a rule", "name", "tool", "when", "content", "test"); err != nil {
		return nil, 0, err
	}
	r := &Rule{}
	name, ok := o.members["name"].(string)
	if !ok {
		return nil, 0, &Error{Place: place + ".name", Reason: "must be text of 1 to 200 characters"}
	}
	if n := canon.Chars(name); n < 1 || n > MaxNameChars {
		return nil, 0, &Error{Place: place + ".name", Reason: fmt.Sprintf("must be text of 1 to %d characters, not %d", MaxNameChars, n)}
	}
	r.Name = name
	r.Fingerprint = canon.Fingerprint([]byte(name))

	tools, err := parseTools(o.members["tool"], place+".tool")
	if err != nil {
		return nil, 0, err
	}
	r.Tools = tools

	parts := 0
	if w, ok := o.members["when"]; ok {
		if r.When, parts, err = parseConditions(w, place+".when", MaxWhen); err != nil {
			return nil, 0, err
		}
	}
	if c, ok := o.members["content"]; ok {
		if r.Content, err = parseContent(c, place+".content"); err != nil {
			return nil, 0, err
		}
	}
	if t, ok := o.members["test"]; ok {
		var n int
		if r.Test, n, err = parseConditions(t, place+".test", MaxTests); err != nil {
			return nil, 0, err
		}
		parts += n
	}
	return r, parts, nil
}

func parseTools(v any, place string) ([]string, error) {
	switch x := v.(type) {
	case nil:
		return nil, &Error{Place: place, Reason: "is missing; name the tool, or a list of 1 to 64 tools"}
	case string:
		if !toolNameOK(x) {
			return nil, &Error{Place: place, Reason: "must be a tool's name: 1 to 128 letters, digits, _, - and ."}
		}
		return []string{x}, nil
	case []any:
		if len(x) < 1 || len(x) > MaxTools {
			return nil, &Error{Place: place, Reason: fmt.Sprintf("must list 1 to %d tools, not %d", MaxTools, len(x))}
		}
		var out []string
		for i, e := range x {
			s, ok := e.(string)
			if !ok || !toolNameOK(s) {
				return nil, &Error{Place: fmt.Sprintf("%s[%d]", place, i), Reason: "must be a tool's name: 1 to 128 letters, digits, _, - and ."}
			}
			if slices.Contains(out, s) {
				return nil, &Error{Place: fmt.Sprintf("%s[%d]", place, i), Reason: "names a tool the list already names"}
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, &Error{Place: place, Reason: "must be a tool's name or a list of 1 to 64 names"}
}

// toolNameOK: 1 to 128 of A-Z a-z 0-9 _ - . (the settings' rule for tool
// names; a rule naming anything else could never apply).
func toolNameOK(s string) bool {
	if len(s) < 1 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

func parseContent(v any, place string) (*Content, error) {
	o, ok := v.(*object)
	if !ok {
		return nil, &Error{Place: place, Reason: "must be an object with pointer and as"}
	}
	if err := onlyMembers(o, place, "content", "pointer", "as"); err != nil {
		return nil, err
	}
	ptr, err := pointerMember(o, place)
	if err != nil {
		return nil, err
	}
	as, _ := o.members["as"].(string)
	if as != "json" && as != "value" {
		return nil, &Error{Place: place + ".as", Reason: `must be "json" (the argument is text holding JSON) or "value" (the argument is the content itself)`}
	}
	return &Content{Pointer: ptr.text, AsJSON: as == "json", ptr: ptr}, nil
}

// pointerMember reads the member "pointer" of o, the object at place.
func pointerMember(o *object, place string) (pointer, error) {
	ps, ok := o.members["pointer"].(string)
	if !ok {
		return pointer{}, &Error{Place: place + ".pointer", Reason: "must be a JSON Pointer (RFC 6901) as text"}
	}
	ptr, err := parsePointer(ps)
	if err != nil {
		return pointer{}, &Error{Place: place + ".pointer", Reason: err.Error()}
	}
	return ptr, nil
}

// parseConditions reads one condition or a list of 1 to most; it returns
// them and their pattern parts.
func parseConditions(v any, place string, most int) ([]*Condition, int, error) {
	if list, ok := v.([]any); ok {
		if len(list) < 1 || len(list) > most {
			return nil, 0, &Error{Place: place, Reason: fmt.Sprintf("must be one condition or a list of 1 to %d, not %d", most, len(list))}
		}
		var out []*Condition
		parts := 0
		for i, e := range list {
			c, err := parseCondition(e, fmt.Sprintf("%s[%d]", place, i))
			if err != nil {
				return nil, 0, err
			}
			if c.pat != nil {
				parts += c.pat.parts
			}
			out = append(out, c)
		}
		return out, parts, nil
	}
	c, err := parseCondition(v, place)
	if err != nil {
		return nil, 0, err
	}
	parts := 0
	if c.pat != nil {
		parts = c.pat.parts
	}
	return []*Condition{c}, parts, nil
}

func parseCondition(v any, place string) (*Condition, error) {
	o, ok := v.(*object)
	if !ok {
		return nil, &Error{Place: place, Reason: "must be a condition: an object with pointer and one of equals, oneOf, absent or matches"}
	}
	if err := onlyMembers(o, place, "a condition", "pointer", "equals", "oneOf", "absent", "matches", "orAbsent"); err != nil {
		return nil, err
	}
	ptr, err := pointerMember(o, place)
	if err != nil {
		return nil, err
	}
	c := &Condition{Pointer: ptr.text, ptr: ptr}
	var kinds []string
	for _, n := range o.names {
		switch n {
		case "equals", "oneOf", "absent", "matches":
			kinds = append(kinds, n)
		}
	}
	if len(kinds) != 1 {
		return nil, &Error{Place: place, Reason: fmt.Sprintf("must have exactly one of equals, oneOf, absent or matches, not %d", len(kinds))}
	}
	switch kinds[0] {
	case "equals":
		c.Kind, c.Value = Equals, o.members["equals"]
	case "oneOf":
		list, ok := o.members["oneOf"].([]any)
		if !ok || len(list) < 1 || len(list) > MaxOneOf {
			return nil, &Error{Place: place + ".oneOf", Reason: fmt.Sprintf("must be a list of 1 to %d values", MaxOneOf)}
		}
		c.Kind, c.Values = OneOf, list
	case "absent":
		if b, ok := o.members["absent"].(bool); !ok || !b {
			return nil, &Error{Place: place + ".absent", Reason: "must be true"}
		}
		c.Kind = Absent
	case "matches":
		s, ok := o.members["matches"].(string)
		if !ok || s == "" {
			return nil, &Error{Place: place + ".matches", Reason: "must be a pattern: text of at least one character"}
		}
		c.Kind, c.Pattern, c.pat = Matches, s, compilePattern(s)
	}
	if oa, ok := o.members["orAbsent"]; ok {
		b, ok := oa.(bool)
		if !ok {
			return nil, &Error{Place: place + ".orAbsent", Reason: "must be true or false"}
		}
		if c.Kind == Absent {
			return nil, &Error{Place: place + ".orAbsent", Reason: "has no meaning beside absent"}
		}
		c.OrAbsent = b
	}
	return c, nil
}

// Fingerprint is the SHA-256 of the file's parsed content in the one form
// of RFC 8785, in base64url: spacing does not change it, any rule does.
func (rs *Rules) Fingerprint() string { return rs.fingerprint }

// Tools lists, sorted, the names of the tools the rules name.
func (rs *Rules) Tools() []string {
	out := make([]string, 0, len(rs.byTool))
	for t := range rs.byTool {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// Rules lists the rules in the file's order.
func (rs *Rules) Rules() []*Rule { return slices.Clone(rs.rules) }
