package glob

import "fmt"

// Rules is a list of tool patterns in file order, ready to decide names.
// It is safe for concurrent use once built.
type Rules struct {
	exact map[string]int // exact name -> index
	globs []entry        // patterns with a wildcard, in file order
	n     int
}

type entry struct {
	index int
	p     *Pattern
}

// Decision is the rule that decides a name.
type Decision struct {
	Index   int    // the rule's index in the list given to NewRules
	Pattern string // the rule as written
	Exact   bool   // the rule is the name itself
}

// Label names how the rule matched: "exact" or "glob:<pattern>".
func (d Decision) Label() string {
	if d.Exact {
		return "exact"
	}
	return "glob:" + d.Pattern
}

// NewRules compiles patterns in file order. A pattern given twice is refused
// (the second could never decide anything).
func NewRules(patterns []string) (*Rules, error) {
	r := &Rules{exact: make(map[string]int), n: len(patterns)}
	seen := make(map[string]int, len(patterns))
	for i, s := range patterns {
		p, err := Compile(s)
		if err != nil {
			return nil, fmt.Errorf("tool rule %d (%q): %w", i, s, err)
		}
		if j, dup := seen[s]; dup {
			return nil, fmt.Errorf("tool rule %d (%q): the same pattern as rule %d; remove one", i, s, j)
		}
		seen[s] = i
		if p.Exact() {
			r.exact[s] = i
		} else {
			r.globs = append(r.globs, entry{i, p})
		}
	}
	return r, nil
}

// Len is the number of rules.
func (r *Rules) Len() int { return r.n }

// Resolve finds the rule that decides name: the exact rule if there is one,
// else the matching glob with the longest literal part, the first in file
// order among equals. ok is false when no rule matches.
func (r *Rules) Resolve(name string) (d Decision, ok bool) {
	if i, found := r.exact[name]; found {
		return Decision{Index: i, Pattern: name, Exact: true}, true
	}
	best := -1
	for k, e := range r.globs {
		if best >= 0 && e.p.literal <= r.globs[best].p.literal {
			continue // cannot win: globs are in file order
		}
		if e.p.Match(name) {
			best = k
		}
	}
	if best < 0 {
		return Decision{}, false
	}
	e := r.globs[best]
	return Decision{Index: e.index, Pattern: e.p.source}, true
}

// Matching lists every rule that matches name, in file order (for reports
// that show why a rule did not decide).
func (r *Rules) Matching(name string) []Decision {
	var out []Decision
	i, exact := r.exact[name]
	for _, e := range r.globs {
		if exact && e.index > i {
			out = append(out, Decision{Index: i, Pattern: name, Exact: true})
			exact = false
		}
		if e.p.Match(name) {
			out = append(out, Decision{Index: e.index, Pattern: e.p.source})
		}
	}
	if exact {
		out = append(out, Decision{Index: i, Pattern: name, Exact: true})
	}
	return out
}
