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
	// asciiSet[c] is 1 + the index in asciiSets of the set of an ASCII
	// character c of the pattern, 0 for none: no map look-up for ASCII.
	asciiSet  [128]uint16
	asciiSets [][]uint64
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
		if t.kind == tokLiteral && t.r < 128 {
			k := p.asciiSet[t.r]
			if k == 0 {
				p.asciiSets = append(p.asciiSets, make([]uint64, w))
				k = uint16(len(p.asciiSets))
				p.asciiSet[t.r] = k
			}
			p.asciiSets[k-1][i/64] |= bit
			continue
		}
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
	if p.words == 1 {
		return p.matchOneWord(text)
	}
	w := p.words
	buf := make([]uint64, 3*w)
	cur, next, adv := buf[:w], buf[w:2*w], buf[2*w:]
	cur[0] = 1
	p.closeOver(cur)
	for _, c := range text {
		sepChar := isSep(c)
		if sepChar {
			for i := range w {
				adv[i] = cur[i] & p.sep[i]
			}
		} else {
			for i := range w {
				adv[i] = cur[i] & p.anyOne[i]
			}
			if set := p.literalSet(c); set != nil {
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
		alive := false
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

// literalSet is the set of positions of the literal c, or nil where c's
// positions are kept as a list (or c is not in the pattern).
func (p *pattern) literalSet(c rune) []uint64 {
	if c < 128 {
		if k := p.asciiSet[c]; k != 0 {
			return p.asciiSets[k-1]
		}
		return nil
	}
	return p.litSets[c]
}

// matchOneWord is match for a pattern of at most 63 parts, whose sets of
// positions fit in one word.
func (p *pattern) matchOneWord(text string) bool {
	sep, anyOne, oneStar, twoStar := p.sep[0], p.anyOne[0], p.oneStar[0], p.twoStar[0]
	stars := oneStar | twoStar
	cur := uint64(1)
	cur |= (cur & stars) << 1
	for _, c := range text {
		var adv, stay uint64
		if isSep(c) {
			adv = cur & sep
			stay = cur & twoStar
		} else {
			adv = cur & anyOne
			if set := p.literalSet(c); set != nil {
				adv |= cur & set[0]
			}
			stay = cur & stars
		}
		cur = adv<<1 | stay
		if cur == 0 {
			return false
		}
		cur |= (cur & stars) << 1
	}
	return cur&(1<<p.parts) != 0
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
