package contentrules

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Reason codes of a refusal.
const (
	CodeContentRule       = "content-rule"
	CodeContentUnreadable = "content-unreadable"
)

// Refusal is why a rule refused a call. Nothing in it comes from the
// call's arguments: only the rule's name, and pointers and values from the
// rules file.
type Refusal struct {
	Rule            string // the rule's name
	RuleFingerprint string // canon.Fingerprint of the name's UTF-8 bytes
	Code            string // CodeContentRule or CodeContentUnreadable
	// Why is what the rule found, without the rule's name:
	// `the value at "/scan" in the content at "/content" must equal false, or be absent`.
	Why string
	// Message is the sentence for the model:
	// `Content rule "…": ` + Why + `.`
	Message string
}

func refuse(r *Rule, code, why string) *Refusal {
	return &Refusal{
		Rule: r.Name, RuleFingerprint: r.Fingerprint, Code: code, Why: why,
		Message: `Content rule "` + r.Name + `": ` + why + ".",
	}
}

// Evaluate tests a call to tool with arguments (the raw JSON of the call's
// arguments; nil or empty is taken as {}) against every rule that names
// the tool, in the file's order. It returns nil when every such rule lets
// the call through, or the first refusal.
func (rs *Rules) Evaluate(tool string, arguments []byte) *Refusal {
	rules := rs.byTool[tool]
	if len(rules) == 0 {
		return nil
	}
	if len(arguments) == 0 {
		arguments = []byte("{}")
	}
	args, rerr := readJSON(arguments, true, maxDepth)
	if rerr != nil {
		return refuse(rules[0], CodeContentUnreadable, "the arguments cannot be read exactly: "+rerr.fault.String())
	}
	e := evaluation{args: args}
	for _, r := range rules {
		if ref := e.rule(r); ref != nil {
			return ref
		}
	}
	return nil
}

// evaluation is one call being tested: its arguments, and the content
// each content pointer found, read once however many rules read it.
type evaluation struct {
	args    any
	content map[contentKey]contentRead
	// matched holds the result of each pattern already tested on each
	// text in this call: rules often repeat a when ("**settings.json").
	matched map[matchKey]bool
}

type matchKey struct {
	where   string // "" for the arguments, else the content pointer and form
	pointer string
	pattern string
}

type contentKey struct {
	pointer string
	asJSON  bool
}

type contentRead struct {
	value   any
	problem string // why it cannot be read; "" when it can
}

func (e *evaluation) rule(r *Rule) *Refusal {
	for _, c := range r.When {
		holds, unreadable := e.holds(c, e.args, "")
		if unreadable != "" {
			return refuse(r, CodeContentUnreadable, c.place("the arguments")+" "+unreadable)
		}
		if !holds {
			return nil // the rule does not apply
		}
	}
	if r.Test == nil {
		return refuse(r, CodeContentRule, "the rule refuses every call it applies to")
	}
	content, where, key := e.args, "the arguments", ""
	if r.Content != nil {
		key = "content " + strconv.FormatBool(r.Content.AsJSON) + " " + r.Content.Pointer
		where = "the content at " + quote(r.Content.Pointer)
		got := e.read(r.Content)
		if got.problem != "" {
			return refuse(r, CodeContentUnreadable, got.problem)
		}
		content = got.value
	}
	for _, c := range r.Test {
		holds, unreadable := e.holds(c, content, key)
		if unreadable != "" {
			return refuse(r, CodeContentUnreadable, c.place(where)+" "+unreadable)
		}
		if !holds {
			return refuse(r, CodeContentRule, c.place(where)+" "+c.demand())
		}
	}
	return nil
}

// read finds the content a rule's content member names.
func (e *evaluation) read(c *Content) contentRead {
	key := contentKey{c.Pointer, c.AsJSON}
	if got, ok := e.content[key]; ok {
		return got
	}
	got := readContent(e.args, c)
	if e.content == nil {
		e.content = map[contentKey]contentRead{}
	}
	e.content[key] = got
	return got
}

func readContent(args any, c *Content) contentRead {
	v, found := c.ptr.find(args)
	if !found {
		return contentRead{problem: "nothing is at the content pointer " + quote(c.Pointer)}
	}
	if !c.AsJSON {
		return contentRead{value: v}
	}
	text, ok := v.(string)
	if !ok {
		return contentRead{problem: "the value at " + quote(c.Pointer) + " is not text holding JSON"}
	}
	parsed, rerr := readJSON([]byte(text), true, maxDepth)
	if rerr != nil {
		return contentRead{problem: "the content at " + quote(c.Pointer) + " cannot be read exactly as JSON: " + rerr.fault.String()}
	}
	return contentRead{value: parsed}
}

// holds tests the condition c on the value at its pointer in doc (named
// by where, for remembering pattern results). It returns a reason instead
// when the value cannot be tested exactly (a text too long for a pattern).
func (e *evaluation) holds(c *Condition, doc any, where string) (holds bool, unreadable string) {
	v, found := c.ptr.find(doc)
	if c.Kind == Absent {
		return !found, ""
	}
	if !found {
		return c.OrAbsent, ""
	}
	switch c.Kind {
	case Equals:
		return equalJSON(v, c.Value), ""
	case OneOf:
		for _, w := range c.Values {
			if equalJSON(v, w) {
				return true, ""
			}
		}
		return false, ""
	case Matches:
		s, ok := v.(string)
		if !ok {
			return false, "" // matches is met only by text
		}
		if longerThan(s, MaxMatchedChars) {
			return false, fmt.Sprintf("is a text over %s characters, too long to test against a pattern", "4,096")
		}
		key := matchKey{where, c.Pointer, c.Pattern}
		if m, ok := e.matched[key]; ok {
			return m, ""
		}
		m := c.pat.match(s)
		if e.matched == nil {
			e.matched = map[matchKey]bool{}
		}
		e.matched[key] = m
		return m, ""
	}
	return false, ""
}

// longerThan reports whether s has more than n characters, without
// counting the whole of a long text.
func longerThan(s string, n int) bool {
	if len(s) <= n {
		return false
	}
	if len(s) > 4*n {
		return true
	}
	return utf8.RuneCountInString(s) > n
}

// place names the value a condition reads: `the value at "/scan" in the
// content at "/content"`, or `the content at "/content"` for "".
func (c *Condition) place(where string) string {
	if c.Pointer == "" {
		if where == "the arguments" {
			return "the arguments"
		}
		return where
	}
	return "the value at " + quote(c.Pointer) + " in " + where
}

// demand says what the condition asks, for a refusal: `must equal false,
// or be absent`. The values are the rules file's own.
func (c *Condition) demand() string {
	var s string
	switch c.Kind {
	case Equals:
		s = "must equal " + writeJSON(c.Value)
	case OneOf:
		parts := make([]string, len(c.Values))
		for i, v := range c.Values {
			parts[i] = writeJSON(v)
		}
		s = "must be one of " + strings.Join(parts, ", ")
	case Absent:
		return "must be absent"
	case Matches:
		s = "must be text matching the pattern " + quote(c.Pattern)
	}
	if c.OrAbsent {
		s += ", or be absent"
	}
	return s
}

func quote(s string) string { return strconv.Quote(s) }
