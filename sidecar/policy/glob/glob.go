// Package glob matches tool rules against (namespaced) tool names and picks
// the rule that decides a name.
//
// # Patterns
//
// A pattern is 1 to [MaxLen] characters of a tool name (letters, digits,
// "_", "-", ".") and the two wildcards:
//
//   - any run of characters, the empty run included
//     ?   exactly one character
//
// There are no other metacharacters: "[", "{", "\" and the rest are refused,
// not taken literally, so a pattern never means something its author did not
// see. A pattern without a wildcard is an exact name.
//
// "*" crosses the namespace separator: "*" alone matches every tool of every
// server, "fs.*" every tool of the server fs (whatever its tool names hold),
// "*.read_file" the read_file of every server, and "f*" both "fs.read_file"
// and "files.list". A wildcard cannot be bound to one segment because tool
// names may themselves hold the separator's characters ("rent.car" on a
// server with "." as separator, "read_file" with "__"). To keep a rule to one
// server, begin it with the server's name and the separator.
//
// # Which rule decides
//
// [Rules.Resolve] applies, in this order: a rule that is exactly the name
// beats every glob; among matching globs the one with the longest literal
// part (characters other than "*" and "?") wins; among those, the one first
// in the file. So with "fs.*", "fs.read_*" and "*", the name "fs.read_file"
// is decided by "fs.read_*" (7 literal characters beat 3 and 0).
//
// # Cost
//
// Matching runs the pattern as an automaton over all its positions at once,
// in bit sets: each character of the name costs a few word operations,
// nothing backtracks, and no pattern or name can make a match slow.
package glob

import (
	"fmt"
	"unicode/utf8"
)

// MaxLen is the longest pattern, in characters: room for a server's name,
// the separator and a tool name of 128 characters.
const MaxLen = 191

// words is the uint64 words in a set of positions 0..MaxLen; the set
// operations below are written out for exactly 3.
const words = (MaxLen + 1 + 63) / 64

var _ [words - 3]struct{} // words >= 3
var _ [3 - words]struct{} // words <= 3

type set [words]uint64

func (s *set) add(i int)          { s[i/64] |= 1 << (i % 64) }
func (s *set) has(i int) bool     { return s[i/64]&(1<<(i%64)) != 0 }
func (s *set) and(o *set) (r set) { r[0], r[1], r[2] = s[0]&o[0], s[1]&o[1], s[2]&o[2]; return }
func (s *set) or(o *set) (r set)  { r[0], r[1], r[2] = s[0]|o[0], s[1]|o[1], s[2]|o[2]; return }
func (s *set) empty() bool        { return s[0]|s[1]|s[2] == 0 }

// shl moves every position one up.
func (s *set) shl() (r set) {
	r[0] = s[0] << 1
	r[1] = s[1]<<1 | s[0]>>63
	r[2] = s[2]<<1 | s[1]>>63
	return
}

// Pattern is a compiled pattern.
type Pattern struct {
	source  string
	parts   int // tokens: each character, "?" or run of stars
	literal int // characters other than wildcards
	wild    bool
	star    set      // positions holding a run of stars
	one     set      // positions holding "?"
	lit     [128]set // positions holding each ASCII character
	final   int      // the accepting position (= parts)
}

// nameChar reports whether c may appear in a tool name.
func nameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

// Check reports why s is not a pattern, or nil.
func Check(s string) error {
	if s == "" || len(s) > MaxLen {
		return fmt.Errorf("a tool pattern is 1 to %d characters", MaxLen)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !nameChar(c) && c != '*' && c != '?' {
			r, _ := utf8.DecodeRuneInString(s[i:])
			return fmt.Errorf("%q at %d is not allowed: a tool pattern holds letters, digits, '_', '-', '.' and the wildcards '*' and '?' only", r, i)
		}
	}
	return nil
}

// Compile checks and compiles a pattern.
func Compile(s string) (*Pattern, error) {
	if err := Check(s); err != nil {
		return nil, err
	}
	p := &Pattern{source: s}
	pos := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '*':
			p.wild = true
			if i > 0 && s[i-1] == '*' {
				continue // a run of stars is one token
			}
			p.star.add(pos)
		case '?':
			p.wild = true
			p.one.add(pos)
		default:
			p.literal++
			p.lit[c].add(pos)
		}
		pos++
	}
	p.parts, p.final = pos, pos
	return p, nil
}

// MustCompile is Compile for patterns known to be good; it panics otherwise.
func MustCompile(s string) *Pattern {
	p, err := Compile(s)
	if err != nil {
		panic("glob: " + err.Error())
	}
	return p
}

// String is the pattern as written.
func (p *Pattern) String() string { return p.source }

// Literal is the number of characters of the pattern other than "*" and "?".
func (p *Pattern) Literal() int { return p.literal }

// Exact reports whether the pattern has no wildcard (it matches only itself).
func (p *Pattern) Exact() bool { return !p.wild }

// close adds, for each active star, the position after it: a star may match
// the empty run. Runs of stars are one token, so one step is enough.
func (p *Pattern) close(s set) set {
	st := s.and(&p.star)
	st = st.shl()
	return s.or(&st)
}

// Match reports whether the whole of name matches the pattern. Any text is
// accepted; "?" matches one character (one rune; each byte of invalid UTF-8
// counts as one).
func (p *Pattern) Match(name string) bool {
	if !p.wild {
		return name == p.source
	}
	var cur set
	cur.add(0)
	cur = p.close(cur)
	for _, c := range name {
		adv := cur.and(&p.one)
		if c < 128 {
			l := cur.and(&p.lit[c])
			adv = adv.or(&l)
		}
		next := adv.shl()
		stay := cur.and(&p.star)
		next = next.or(&stay)
		if next.empty() {
			return false
		}
		cur = p.close(next)
	}
	return cur.has(p.final)
}
