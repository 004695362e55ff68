package redact

import (
	"bytes"
	"math"
	"sort"
	"strings"
)

// The random-looking value detector (kind entropy): see the package doc,
// "Random-looking values", for the rule and the figures behind it.

// MinRandomLen is the shortest run the entropy detector judges.
const MinRandomLen = 24

// entropyFloor is the least Shannon entropy, in bits per character, of a
// random-looking run of n characters: about the first percentile of
// random base62 and base64 strings of that length (measured: 3.89 at 24,
// 4.20 at 32, 4.45 at 40, 4.92 at 64, 5.39 at 128), interpolated between
// the points and flat beyond the last.
var entropyFloor = [][2]float64{{24, 3.85}, {32, 4.15}, {40, 4.4}, {64, 4.85}, {128, 5.3}, {256, 5.5}}

// EntropyFloor is the least bits per character of a random-looking run of
// n characters.
func EntropyFloor(n int) float64 {
	x := float64(n)
	if x <= entropyFloor[0][0] {
		return entropyFloor[0][1]
	}
	for i := 1; i < len(entropyFloor); i++ {
		if x <= entropyFloor[i][0] {
			a, b := entropyFloor[i-1], entropyFloor[i]
			return a[1] + (b[1]-a[1])*(x-a[0])/(b[0]-a[0])
		}
	}
	return entropyFloor[len(entropyFloor)-1][1]
}

// maxWordy is the largest share of a random-looking run's letters that may
// stand in words of four letters or more (camel-case parts: "Value",
// "rewrite", "AMD"): identifiers are words, random text is not.
const maxWordy = 0.6

// wordMin is the length of a word in wordy.
const wordMin = 4

// Entropy is the Shannon entropy of s's bytes, in bits per byte.
func Entropy(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	h, n := 0.0, float64(len(s))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

// charClass of an ASCII byte: lower, upper, digit or other.
func charClass(c byte) int {
	switch {
	case 'a' <= c && c <= 'z':
		return 0
	case 'A' <= c && c <= 'Z':
		return 1
	case '0' <= c && c <= '9':
		return 2
	}
	return 3
}

// wordy is the share of s's letters that stand in camel-case words of four
// letters or more.
func wordy(s string) float64 {
	letters, inWords := 0, 0
	start := 0
	for i := 1; i <= len(s); i++ {
		cut := i == len(s)
		if !cut {
			a, b := charClass(s[i-1]), charClass(s[i])
			switch {
			case a != b && (a >= 2 || b >= 2):
				cut = true
			case a == 0 && b == 1: // aB
				cut = true
			case a == 1 && b == 1 && i+1 < len(s) && charClass(s[i+1]) == 0: // ABc: A | Bc
				cut = true
			}
		}
		if !cut {
			continue
		}
		if w := s[start:i]; charClass(w[0]) <= 1 {
			letters += len(w)
			if len(w) >= wordMin {
				inWords += len(w)
			}
		}
		start = i
	}
	if letters == 0 {
		return 0
	}
	return float64(inWords) / float64(letters)
}

// looksRandom reports whether the run s (base64 alphabets, padding cut off)
// is random-looking: MinRandomLen characters or more, an upper-case letter,
// a lower-case letter and a digit, not only hexadecimal digits and dashes,
// at least EntropyFloor bits per character, and not made of words.
func looksRandom(s string, minEntropy func(int) float64) bool {
	if len(s) < MinRandomLen {
		return false
	}
	var up, lo, dg bool
	hexOnly := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch charClass(c) {
		case 0:
			lo = true
			hexOnly = hexOnly && c <= 'f'
		case 1:
			up = true
			hexOnly = hexOnly && c <= 'F'
		case 2:
			dg = true
		default:
			hexOnly = hexOnly && c == '-'
		}
	}
	if hexOnly || !up || !lo || !dg {
		return false
	}
	return Entropy(s) >= minEntropy(len(s)) && wordy(s) < maxWordy
}

// isB64 reports whether c is in either base64 alphabet.
func isB64(c byte) bool { return charClass(c) < 3 || c == '+' || c == '/' || c == '_' || c == '-' }

// b64Runs are the maximal runs of s in the base64 alphabets, each with up
// to two "=" after it, as [start, end) with the padding inside.
func b64Runs(s string, minLen int) [][2]int {
	var out [][2]int
	for i := 0; i < len(s); {
		if !isB64(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isB64(s[j]) {
			j++
		}
		e := j
		for k := 0; k < 2 && e < len(s) && s[e] == '='; k++ {
			e++
		}
		if j-i >= minLen {
			out = append(out, [2]int{i, e})
		}
		i = e
	}
	return out
}

// exempt are the ranges of s whose random-looking runs are content, not
// secrets: the bodies of PEM blocks that are not private keys
// (certificates, public keys).
func exempt(s string) [][2]int {
	var out [][2]int
	for at := 0; ; {
		i := strings.Index(s[at:], "-----BEGIN ")
		if i < 0 {
			return out
		}
		i += at
		le := strings.Index(s[i+11:], "-----")
		if le < 0 {
			return out
		}
		label := s[i+11 : i+11+le]
		body := i + 11 + le + 5
		end := strings.Index(s[body:], "-----END "+label+"-----")
		if end < 0 {
			return out
		}
		end += body
		if !strings.Contains(label, "PRIVATE") {
			out = append(out, [2]int{body, end})
		}
		at = end
	}
}

// within reports whether [a, e) lies inside one of the ranges r, which are
// in order and apart.
func within(r [][2]int, a, e int) bool {
	i := sort.Search(len(r), func(i int) bool { return r[i][1] >= e })
	return i < len(r) && r[i][0] <= a
}

// digestLabels: a run right after one of these is a digest written out
// (Subresource Integrity, OCI and our own fingerprints), not a secret.
var digestLabels = []string{"sha1-", "sha256-", "sha384-", "sha512-", "sha1:", "sha256:", "sha384:", "sha512:", "md5:", "md5-", ";base64,"}

// digestLabelled reports whether the run begins with a digest label
// ("sha384-…": the label's "-" is in the run).
func digestLabelled(run string) bool {
	head := strings.ToLower(run[:min(len(run), 7)])
	for _, l := range digestLabels {
		if strings.HasSuffix(l, "-") && strings.HasPrefix(head, l) {
			return true
		}
	}
	return false
}

func afterDigestLabel(s string, a int) bool {
	before := strings.ToLower(s[max(0, a-8):a])
	for _, l := range digestLabels {
		if strings.HasSuffix(before, l) {
			return true
		}
	}
	return false
}

// publicPrefixes begin random-looking values that are public by design:
// Stripe's publishable keys, which web pages carry.
var publicPrefixes = []string{"pk_live_", "pk_test_"}

func publicPrefix(run string) bool {
	for _, p := range publicPrefixes {
		if strings.HasPrefix(run, p) {
			return true
		}
	}
	return false
}

// fileSignatures begin the bytes of files that travel as base64: images,
// documents, archives, SSH public keys (a run decoding to one is content;
// a data: URL's ";base64," already says so).
var fileSignatures = [][]byte{
	[]byte("\x89PNG\r\n\x1a\n"), []byte("\xff\xd8\xff"), []byte("GIF87a"), []byte("GIF89a"), []byte("%PDF-"),
	[]byte("PK\x03\x04"), []byte("\x1f\x8b"), []byte("BM"), []byte("II*\x00"), []byte("MM\x00*"), []byte("RIFF"),
	[]byte("\x00\x00\x00\x0bssh-ed25519"), []byte("\x00\x00\x00\x07ssh-rsa"), []byte("\x00\x00\x00\x13ecdsa-sha2-"),
	[]byte("\x00\x00\x00\x1csk-"), []byte("\x00\x00\x01\x00"), []byte("wOF2"), []byte("wOFF"), []byte("OggS"),
	[]byte("ID3"), []byte("\x00\x00\x00\x18ftyp"), []byte("\x00\x00\x00\x1cftyp"), []byte("\x00\x00\x00\x20ftyp"),
}

// isContent reports whether the base64 run decodes to readable text (which
// the base64 detector judges by its words) or to a file of a known kind.
func isContent(run string) bool {
	b, ok := decodeB64(run)
	if !ok {
		return false
	}
	if readable(b) {
		return true
	}
	for _, sig := range fileSignatures {
		if bytes.HasPrefix(b, sig) {
			return true
		}
	}
	return false
}

// randomRuns is the entropy detector: random-looking runs, or their parts
// (see randomSpans).
func randomRuns(_ *Redactor, s string, _ *scan) []span {
	return randomSpans(s, MinRandomLen, func(run string) bool { return looksRandom(run, EntropyFloor) })
}

// randomSpans are the runs of s (at least minLen long) that random says are
// secret, past the exempt ranges, digest labels and content. A run of parts
// ("/v1/files/<id>/raw", "build_<id>") whose random parts stand among
// path-like ones gives its random parts alone; a run that is not random as
// a whole is tried again by its parts between "/", "+", "_" and "-".
func randomSpans(s string, minLen int, random func(string) bool) []span {
	var out []span
	var ex [][2]int
	exFound := false
	for _, rn := range b64Runs(s, minLen) {
		a, e := rn[0], rn[1]
		core := strings.TrimRight(s[a:e], "=")
		if afterDigestLabel(s, a) || digestLabelled(core) || publicPrefix(core) {
			continue
		}
		if !exFound {
			ex, exFound = exempt(s), true
		}
		if within(ex, a, e) {
			continue
		}
		whole := random(core)
		if whole && isContent(s[a:e]) {
			continue
		}
		if parts, ok := randomParts(core, minLen, random); ok {
			for _, p := range parts {
				end := a + p[1]
				if p[1] == len(core) {
					end = e // the padding goes with the last part
				}
				out = append(out, span{a: a + p[0], e: end})
			}
			continue
		}
		if whole {
			out = append(out, span{a: a, e: e})
			continue
		}
		for i := 0; i < len(core); {
			j := i
			for j < len(core) && charClass(core[j]) < 3 {
				j++
			}
			if j-i >= minLen && j-i < len(core) && random(core[i:j]) {
				out = append(out, span{a: a + i, e: a + j})
			}
			i = j + 1
		}
	}
	return out
}

// randomParts are the random parts of a run of parts between "/", "_" and
// "-" when each of its other parts is path-like (no upper case, or words)
// or content (base64 of text, which the base64 detector judges); ok is
// false when no part is random or content, or some other part is neither
// path-like nor either.
func randomParts(core string, minLen int, random func(string) bool) (parts [][2]int, ok bool) {
	if !strings.ContainsAny(core, "/_-") {
		return nil, false
	}
	content := false
	for at := 0; at <= len(core); {
		end := at + strings.IndexAny(core[at:], "/_-")
		if end < at {
			end = len(core)
		}
		part := core[at:end]
		switch {
		case len(part) >= minLen && random(part):
			if isContent(part) {
				content = true
			} else {
				parts = append(parts, [2]int{at, end})
			}
		case !pathLike(part):
			return nil, false
		}
		at = end + 1
	}
	return parts, len(parts) > 0 || content
}

func pathLike(part string) bool {
	if !strings.ContainsAny(part, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
		return true
	}
	return wordy(part) >= maxWordy
}

// awsShaped finds 40-character runs of AWS's secret alphabet (letters,
// digits, "+", "/") that look random by a lower floor (4.0 bits per
// character) than the entropy detector's.
func awsShaped(_ *Redactor, s string, _ *scan) []span {
	var out []span
	var ex [][2]int
	exFound := false
	for _, sp := range awsRuns(s) {
		run := s[sp.a:sp.e]
		if !looksRandom(run, func(int) float64 { return 4.0 }) || afterDigestLabel(s, sp.a) || isContent(run) {
			continue
		}
		if !exFound {
			ex, exFound = exempt(s), true
		}
		if !within(ex, sp.a, sp.e) {
			out = append(out, sp)
		}
	}
	return out
}

// awsBesideKeyID finds 40-character runs of AWS's shape in text with an AWS
// key id, or in a call with one: an upper-case letter, a lower-case one and
// a digit, "+" or "/".
func awsBesideKeyID(_ *Redactor, s string, sc *scan) []span {
	if !sc.awsKeyID {
		return nil
	}
	var out []span
	for _, sp := range awsRuns(s) {
		run := s[sp.a:sp.e]
		if strings.ContainsAny(run, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") && strings.ContainsAny(run, "abcdefghijklmnopqrstuvwxyz") &&
			strings.ContainsAny(run, "0123456789+/") {
			out = append(out, sp)
		}
	}
	return out
}

func isAWSChar(c byte) bool { return charClass(c) < 3 || c == '+' || c == '/' }

// awsRuns are the runs of exactly 40 characters of AWS's secret alphabet,
// not next to another such character or "=".
func awsRuns(s string) []span {
	var out []span
	for i := 0; i < len(s); {
		if !isAWSChar(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isAWSChar(s[j]) {
			j++
		}
		if j-i == 40 && (j == len(s) || s[j] != '=') {
			out = append(out, span{a: i, e: j})
		}
		i = j
	}
	return out
}
