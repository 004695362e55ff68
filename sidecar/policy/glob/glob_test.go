package glob

import (
	"regexp"
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, name string
		want          bool
	}{
		{"fs.read_file", "fs.read_file", true},
		{"fs.read_file", "fs.read_files", false},
		{"fs.read_file", "FS.read_file", false}, // case matters
		{"fs.read_*", "fs.read_file", true},
		{"fs.read_*", "fs.read_", true}, // "*" matches the empty run
		{"fs.read_*", "fs.write_file", false},
		{"fs.read_*", "xfs.read_file", false}, // anchored at the start
		{"*", "", true},
		{"*", "anything.at.all", true},
		{"?", "", false},
		{"?", "a", true},
		{"?", "ab", false},
		{"?", "é", true}, // one character, not one byte
		{"fs.?ead_file", "fs.read_file", true},
		{"fs.?ead_file", "fs.ead_file", false},
		{"a*b*c", "abc", true},
		{"a*b*c", "aXbYc", true},
		{"a*b*c", "acb", false},
		{"a*b*c", "abcab", false},
		{"a**b", "ab", true}, // a run of stars is one star
		{"*_file", "fs.read_file", true},
		{"*.*", "fs", false},
		// "*" crosses the namespace separator, whatever it is.
		{"*.read_file", "fs.read_file", true},
		{"*.read_file", "a.b.read_file", true},
		{"fs.*", "fs.rent.car", true},
		{"f*", "files.list", true},
		{"fs__*", "fs__read_file", true},
		{"*__read_file", "fs__read_file", true},
		{"fs__*", "fs_read_file", false},
		// Names outside the tool-name alphabet are matched, never refused.
		{"fs.*", "fs.\xff", true},
		{"fs.?", "fs.\xff", true},
		{"fs.?", "fs.日本", false},
	} {
		p, err := Compile(tc.pattern)
		if err != nil {
			t.Fatalf("Compile(%q): %v", tc.pattern, err)
		}
		if got := p.Match(tc.name); got != tc.want {
			t.Errorf("%q.Match(%q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
}

func TestCompileRefuses(t *testing.T) {
	for _, s := range []string{"", "fs.[ab]", "fs.{a,b}", `fs.\*`, "fs read", "fs/read", "fs.é", "a+", strings.Repeat("a", MaxLen+1)} {
		if _, err := Compile(s); err == nil {
			t.Errorf("Compile(%q) accepted", s)
		}
	}
	if _, err := Compile(strings.Repeat("*?", MaxLen/2)); err != nil {
		t.Errorf("longest pattern refused: %v", err)
	}
}

func TestPatternFacts(t *testing.T) {
	for _, tc := range []struct {
		s       string
		literal int
		exact   bool
	}{
		{"fs.read_file", 12, true},
		{"fs.read_*", 8, false},
		{"fs.?ead_*", 7, false},
		{"*", 0, false},
		{"**?", 0, false},
	} {
		p := MustCompile(tc.s)
		if p.Literal() != tc.literal || p.Exact() != tc.exact || p.String() != tc.s {
			t.Errorf("%q: literal %d exact %v, want %d %v", tc.s, p.Literal(), p.Exact(), tc.literal, tc.exact)
		}
	}
}

func TestPrecedence(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rules []string
		tool  string
		want  int // index, -1 for none
		label string
	}{
		{"exact beats a glob written before it", []string{"fs.*", "fs.read_file"}, "fs.read_file", 1, "exact"},
		{"exact beats a longer-looking glob", []string{"fs.read_fil?", "fs.read_file"}, "fs.read_file", 1, "exact"},
		{"longest literal part wins", []string{"*", "fs.*", "fs.read_*"}, "fs.read_file", 2, "glob:fs.read_*"},
		{"longest literal wins whatever the order", []string{"fs.read_*", "fs.*", "*"}, "fs.read_file", 0, "glob:fs.read_*"},
		{"'?' is not literal", []string{"fs.????_file", "fs.r*"}, "fs.read_file", 0, "glob:fs.????_file"},
		{"'?' is not literal (2)", []string{"fs.r???_*", "fs.rea*"}, "fs.read_file", 1, "glob:fs.rea*"},
		{"file order breaks a tie", []string{"fs.*e", "fs.r*"}, "fs.read_file", 0, "glob:fs.*e"},
		{"file order breaks a tie (2)", []string{"fs.r*", "fs.*e"}, "fs.read_file", 0, "glob:fs.r*"},
		{"a longer glob that does not match loses", []string{"fs.write_*", "fs.*"}, "fs.read_file", 1, "glob:fs.*"},
		{"catch-all", []string{"fs.read_*", "*"}, "ev.echo", 1, "glob:*"},
		{"no rule", []string{"fs.read_*", "ev.echo"}, "ev.add", -1, ""},
		{"exact only", []string{"ev.echo"}, "ev.echo", 0, "exact"},
		{"exact does not match others", []string{"ev.echo"}, "ev.echo2", -1, ""},
		{"namespaced under __", []string{"*__read_file", "fs__*"}, "fs__read_file", 0, "glob:*__read_file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewRules(tc.rules)
			if err != nil {
				t.Fatal(err)
			}
			d, ok := r.Resolve(tc.tool)
			if tc.want < 0 {
				if ok {
					t.Fatalf("Resolve(%q) = %+v, want no rule", tc.tool, d)
				}
				return
			}
			if !ok || d.Index != tc.want || d.Label() != tc.label || d.Pattern != tc.rules[tc.want] {
				t.Fatalf("Resolve(%q) = %+v %v (%s), want index %d (%s)", tc.tool, d, ok, d.Label(), tc.want, tc.label)
			}
		})
	}
}

func TestMatching(t *testing.T) {
	r, err := NewRules([]string{"*", "fs.read_file", "fs.write_*", "fs.*"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range r.Matching("fs.read_file") {
		got = append(got, d.Label())
	}
	if strings.Join(got, " ") != "glob:* exact glob:fs.*" {
		t.Fatalf("Matching = %v", got)
	}
	if r.Len() != 4 {
		t.Fatalf("Len = %d", r.Len())
	}
}

func TestNewRulesRefuses(t *testing.T) {
	if _, err := NewRules([]string{"fs.*", "ev.*", "fs.*"}); err == nil || !strings.Contains(err.Error(), "same pattern as rule 0") {
		t.Fatalf("duplicate: %v", err)
	}
	if _, err := NewRules([]string{"fs.[a]"}); err == nil || !strings.Contains(err.Error(), "tool rule 0") {
		t.Fatalf("bad pattern: %v", err)
	}
}

// reference is the pattern as a regular expression: the specification of
// Match written the obvious way.
func reference(pattern string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`(?s)^`)
	for _, c := range pattern {
		switch c {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(`$`)
	return regexp.MustCompile(b.String())
}

// toPattern maps any bytes onto a small alphabet, so the fuzzer finds
// patterns full of wildcards and repeated letters.
func toPattern(b []byte) string {
	const alphabet = "ab.*?_"
	var s strings.Builder
	for i, c := range b {
		if i == MaxLen {
			break
		}
		s.WriteByte(alphabet[int(c)%len(alphabet)])
	}
	return s.String()
}

func FuzzMatch(f *testing.F) {
	f.Add([]byte("a*b"), "aab")
	f.Add([]byte("*?*"), "a")
	f.Add([]byte("?a.*"), "ba.\xff")
	f.Add([]byte("****b"), strings.Repeat("a", 300))
	f.Add([]byte{3, 3, 4, 0, 1, 2}, "x.y")
	f.Fuzz(func(t *testing.T, pb []byte, name string) {
		pattern := toPattern(pb)
		if pattern == "" {
			return
		}
		p, err := Compile(pattern)
		if err != nil {
			t.Fatalf("Compile(%q): %v", pattern, err)
		}
		if got, want := p.Match(name), reference(pattern).MatchString(name); got != want {
			t.Fatalf("%q.Match(%q) = %v, reference %v", pattern, name, got, want)
		}
	})
}

// TestNoBlowUp runs the patterns that make backtracking matchers
// exponential against long names; it finishes because Match is linear.
func TestNoBlowUp(t *testing.T) {
	p := MustCompile(strings.Repeat("a*", 60) + "b")
	name := strings.Repeat("a", 100000)
	if p.Match(name) {
		t.Fatal("matched a name without b")
	}
	if !p.Match(name + "b") {
		t.Fatal("did not match a name ending in b")
	}
}

func BenchmarkMatchWorstCase(b *testing.B) {
	p := MustCompile(strings.Repeat("a*", 60) + "b")
	name := strings.Repeat("a", 128)
	for b.Loop() {
		p.Match(name)
	}
}

func BenchmarkResolve(b *testing.B) {
	rules := []string{"*", "fs.*", "fs.read_*", "fs.write_file", "ev.*", "ev.echo", "web.*", "*.search_*"}
	r, err := NewRules(rules)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		r.Resolve("fs.search_files")
	}
}

// TestLongest uses the last position of the sets.
func TestLongest(t *testing.T) {
	p := MustCompile(strings.Repeat("?", MaxLen))
	if !p.Match(strings.Repeat("a", MaxLen)) || p.Match(strings.Repeat("a", MaxLen-1)) || p.Match(strings.Repeat("a", MaxLen+1)) {
		t.Fatal("longest pattern of '?'")
	}
	p = MustCompile(strings.Repeat("a", MaxLen-1) + "*")
	if !p.Match(strings.Repeat("a", MaxLen+50)) || p.Match(strings.Repeat("a", MaxLen-2)) {
		t.Fatal("longest pattern ending in '*'")
	}
}

// FuzzResolve holds Resolve to the rule written out: exact first, then the
// longest literal part, then file order.
func FuzzResolve(f *testing.F) {
	f.Add([]byte("a*\x00ab\x00*b\x00?b"), "ab")
	f.Add([]byte("*\x00a.*\x00a.b"), "a.b")
	f.Fuzz(func(t *testing.T, rb []byte, name string) {
		var rules []string
		seen := map[string]bool{}
		for _, part := range strings.Split(string(rb), "\x00") {
			p := toPattern([]byte(part))
			if p != "" && !seen[p] {
				seen[p] = true
				rules = append(rules, p)
			}
		}
		r, err := NewRules(rules)
		if err != nil {
			t.Fatal(err)
		}
		want := -1
		for i, p := range rules {
			if p == name && !strings.ContainsAny(p, "*?") {
				want = i
				break
			}
		}
		if want < 0 {
			for i, p := range rules {
				if !strings.ContainsAny(p, "*?") || !reference(p).MatchString(name) {
					continue
				}
				if want < 0 || MustCompile(p).Literal() > MustCompile(rules[want]).Literal() {
					want = i
				}
			}
		}
		d, ok := r.Resolve(name)
		if ok != (want >= 0) || ok && d.Index != want {
			t.Fatalf("rules %q name %q: Resolve = %+v %v, want index %d", rules, name, d, ok, want)
		}
	})
}
