package contentrules

import "unicode/utf8"

// A pattern over text: "*" matches any run of characters other than "/"
// and "\", "**" (or any longer run of stars) any run of any characters,
// "?" one character other than "/" and "\", and a "/" or "\" matches
// either separator. Every other character matches itself.
//
// Matching simulates the pattern as an automaton over its positions, all
// at once, with bit sets: each character of the text costs O(parts/64)
// word operations, so a test costs O(len(text) × parts/64) whatever the
// pattern and the text, and nothing backtracks.
type pattern struct {
	source string
	parts  int // tokens: each character, "?" or run of stars
	words  int // uint64 words in a set of positions 0..parts

	oneStar, twoStar, sep, anyOne []uint64 // positions holding each kind of token
	// Literal characters: a bit set for a character that occurs often
	// in the pattern, a list of positions for one that occurs rarely; so
	// the sets take at most about parts words in all, and following a
	// rare character costs fewer steps than a set would.
	litSets  map[rune][]uint64
	litLists map[rune][]int32
}

type tokenKind uint8

const (
	tokLiteral tokenKind = iota
	tokSep
	tokAnyOne
	tokOneStar
	tokTwoStar
)

type token struct {
	kind tokenKind
	r    rune
}

func isSep(r rune) bool { return r == '/' || r == '\\' }

// patternParts counts the parts of a pattern as the rules file's limit
// does: each character, "?" or run of stars counts one.
func patternParts(s string) int {
	return len(tokenize(s))
}

func tokenize(s string) []token {
	var toks []token
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '*':
			j := i
			for j < len(s) && s[j] == '*' {
				j++
			}
			if j-i == 1 {
				toks = append(toks, token{kind: tokOneStar})
			} else {
				toks = append(toks, token{kind: tokTwoStar})
			}
			i = j
			continue
		case r == '?':
			toks = append(toks, token{kind: tokAnyOne})
		case isSep(r):
			toks = append(toks, token{kind: tokSep})
		default:
			toks = append(toks, token{kind: tokLiteral, r: r})
		}
		i += n
	}
	return toks
}

func compilePattern(s string) *pattern {
	toks := tokenize(s)
	n := len(toks)
	w := (n + 1 + 63) / 64
	p := &pattern{
		source: s, parts: n, words: w,
		oneStar: make([]uint64, w), twoStar: make([]uint64, w), sep: make([]uint64, w), anyOne: make([]uint64, w),
		litSets: map[rune][]uint64{}, litLists: map[rune][]int32{},
	}
	counts := map[rune]int{}
	for _, t := range toks {
		if t.kind == tokLiteral {
			counts[t.r]++
		}
	}
	for i, t := range toks {
		bit := uint64(1) << (i % 64)
		switch t.kind {
		case tokOneStar:
			p.oneStar[i/64] |= bit
		case tokTwoStar:
			p.twoStar[i/64] |= bit
		case tokSep:
			p.sep[i/64] |= bit
		case tokAnyOne:
			p.anyOne[i/64] |= bit
		case tokLiteral:
			if counts[t.r] >= w {
				set := p.litSets[t.r]
				if set == nil {
					set = make([]uint64, w)
					p.litSets[t.r] = set
				}
				set[i/64] |= bit
			} else {
				p.litLists[t.r] = append(p.litLists[t.r], int32(i))
			}
		}
	}
	return p
}

// match reports whether the whole of text matches the pattern. text must
// be valid UTF-8.
func (p *pattern) match(text string) bool {
	w := p.words
	buf := make([]uint64, 3*w)
	cur, next, adv := buf[:w], buf[w:2*w], buf[2*w:]
	cur[0] = 1
	p.closeOver(cur)
	for _, c := range text {
		sepChar := isSep(c)
		alive := false
		for i := range w {
			a := uint64(0)
			if sepChar {
				a = cur[i] & p.sep[i]
			} else {
				a = cur[i] & p.anyOne[i]
			}
			adv[i] = a
		}
		if !sepChar {
			if set, ok := p.litSets[c]; ok {
				for i := range w {
					adv[i] |= cur[i] & set[i]
				}
			} else {
				for _, pos := range p.litLists[c] {
					adv[pos/64] |= cur[pos/64] & (1 << (pos % 64))
				}
			}
		}
		// Advance over the matched tokens, stay on the stars.
		var carry uint64
		for i := range w {
			v := adv[i]
			stay := cur[i] & p.twoStar[i]
			if !sepChar {
				stay |= cur[i] & p.oneStar[i]
			}
			next[i] = v<<1 | carry | stay
			carry = v >> 63
			if next[i] != 0 {
				alive = true
			}
		}
		if !alive {
			return false
		}
		p.closeOver(next)
		cur, next = next, cur
	}
	last := p.parts
	return cur[last/64]&(1<<(last%64)) != 0
}

// closeOver adds the positions reached by letting each star match nothing.
// Runs of stars are one token, so two star tokens are never next to each
// other and one step is enough.
func (p *pattern) closeOver(set []uint64) {
	var carry uint64
	for i := range set {
		stars := set[i] & (p.oneStar[i] | p.twoStar[i])
		set[i] |= stars<<1 | carry
		carry = stars >> 63
	}
}
