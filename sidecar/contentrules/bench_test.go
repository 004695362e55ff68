package contentrules

import (
	"fmt"
	"strings"
	"testing"
)

// distinctPatterns gives n different patterns of the given number of
// parts ("a", "?", "*" or "**", no two runs of stars side by side, at
// least one star), each of which matches a long run of "a"s all the way
// through.
func distinctPatterns(n, parts int) []string {
	var out []string
	choices := []string{"a", "?", "*", "**"}
	idx := make([]int, parts)
	for len(out) < n {
		ok, star := true, false
		var b strings.Builder
		for i, k := range idx {
			if k >= 2 {
				if i > 0 && idx[i-1] >= 2 {
					ok = false
				}
				star = true
			}
			b.WriteString(choices[k])
		}
		if ok && star {
			out = append(out, b.String())
		}
		for i := parts - 1; i >= 0; i-- { // next combination
			idx[i]++
			if idx[i] < len(choices) {
				break
			}
			idx[i] = 0
		}
	}
	return out
}

// The worst call the limits allow: 1,000 rules on one tool, 20,000
// pattern parts in all (2,000 different patterns of 10 parts, one in each
// rule's when and one in its test), each tested against a text of 4,096
// characters that keeps the automaton busy to its end, and no rule
// refusing, so every rule is tested.
func BenchmarkEvaluateWorstCase(b *testing.B) {
	pats := distinctPatterns(2*MaxRules, 10)
	var rules []string
	for i := range MaxRules {
		rules = append(rules, fmt.Sprintf(`{"name":"rule %d","tool":"t","when":{"pointer":"/p","matches":%q},"test":{"pointer":"/p","matches":%q}}`, i, pats[2*i], pats[2*i+1]))
	}
	rs := mustParse(b, file(rules...))
	args := []byte(`{"p":"` + strings.Repeat("a", MaxMatchedChars) + `"}`)
	if got := rs.Evaluate("t", args); got != nil {
		b.Fatalf("refused: %+v", got)
	}
	b.ReportAllocs()
	for b.Loop() {
		rs.Evaluate("t", args)
	}
}

// The same, with the same when in every rule (as real files have): the
// pattern is tested once per call.
func BenchmarkEvaluateRepeatedWhen(b *testing.B) {
	var rules []string
	for i := range MaxRules {
		rules = append(rules, fmt.Sprintf(`{"name":"rule %d","tool":"t","when":{"pointer":"/p","matches":"**a**a**a**a**a"},"test":{"pointer":"/p","matches":"*a*a*a*a*a"}}`, i))
	}
	rs := mustParse(b, file(rules...))
	args := []byte(`{"p":"` + strings.Repeat("a", MaxMatchedChars) + `"}`)
	if got := rs.Evaluate("t", args); got != nil {
		b.Fatalf("refused: %+v", got)
	}
	b.ReportAllocs()
	for b.Loop() {
		rs.Evaluate("t", args)
	}
}

// One pattern of 20,000 parts against a text of 4,096 characters.
func BenchmarkEvaluateLongestPattern(b *testing.B) {
	pattern := strings.Repeat("**a", MaxPatternParts/2)
	rs := mustParse(b, file(`{"name":"long","tool":"t","test":{"pointer":"/p","matches":"`+pattern+`","orAbsent":true}}`))
	args := []byte(`{"p":"` + strings.Repeat("a", MaxMatchedChars) + `"}`)
	b.ReportAllocs()
	for b.Loop() {
		rs.Evaluate("t", args)
	}
}

// Patterns with many different characters: the literal positions are
// kept as lists, not as bit sets.
func BenchmarkEvaluateManyCharacters(b *testing.B) {
	var p strings.Builder
	for i := range MaxPatternParts {
		p.WriteRune(rune(0x4E00 + i))
	}
	rs := mustParse(b, file(`{"name":"cjk","tool":"t","test":{"pointer":"/p","matches":"`+p.String()+`","orAbsent":true}}`))
	var text strings.Builder
	for i := range MaxMatchedChars {
		text.WriteRune(rune(0x4E00 + i))
	}
	args := []byte(`{"p":"` + text.String() + `"}`)
	b.ReportAllocs()
	for b.Loop() {
		rs.Evaluate("t", args)
	}
}

// A typical call against the documentation's example.
func BenchmarkEvaluateExample(b *testing.B) {
	rs := exampleRules(b)
	args := []byte(`{"path":"/home/me/proj/settings.json","content":"{\"label\":\"x\",\"scan\":false,\"items\":[1,2,3]}"}`)
	b.ReportAllocs()
	for b.Loop() {
		if got := rs.Evaluate("write_file", args); got != nil {
			b.Fatal(got)
		}
	}
}

func BenchmarkParseLargest(b *testing.B) {
	var rules []string
	for i := range MaxRules {
		rules = append(rules, fmt.Sprintf(`{"name":"rule %d","tool":["t","u"],"when":{"pointer":"/p","matches":"**a**a**a**a**a"},"content":{"pointer":"/c","as":"json"},"test":[{"pointer":"/p","matches":"*a*a*a*a*a"},{"pointer":"/m","oneOf":["a","b",1,null]}]}`, i))
	}
	text := []byte(file(rules...))
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := Parse(text); err != nil {
			b.Fatal(err)
		}
	}
}
