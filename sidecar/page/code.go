package page

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// The registration code: what only the person has before a passkey is
// registered. The page makes it, hands its text once to the process that
// started the page (`mcp-executor page` prints it on its own standard
// error: the person's terminal, or the kubectl exec session of the
// operator), and keeps only its SHA-256. Whoever else reaches the page's
// port (in a pod, every container) cannot register without it.
const (
	// CodeBytes is the code's length: 160 random bits.
	CodeBytes = 20
	// DefaultCodeTTL is how long a code may start a registration.
	DefaultCodeTTL = 15 * time.Minute
	// codeWrongPerMinute is how many wrong codes the page takes in any
	// minute; beyond it every code attempt is refused (429) unchecked.
	codeWrongPerMinute = 5
	// codeWrongMax is how many wrong codes void the code outright.
	codeWrongMax = 20
)

// codeAlphabet is RFC 4648 base32 without padding: letters and 2-7, no
// 0/1/8/9 to mistake for O/I/B/g.
var codeAlphabet = base32.StdEncoding.WithPadding(base32.NoPadding)

// FormatCode writes a code's bytes as the person reads and types them:
// base32 in groups of four, joined by hyphens (39 characters for 20 bytes).
func FormatCode(b []byte) string {
	s := codeAlphabet.EncodeToString(b)
	var out strings.Builder
	for i := 0; i < len(s); i += 4 {
		if i > 0 {
			out.WriteByte('-')
		}
		out.WriteString(s[i:min(i+4, len(s))])
	}
	return out.String()
}

// ParseCode reads a code as a person may type it: hyphens and spaces
// anywhere, letters in either case (ASCII only). It gives the code's
// bytes, exactly CodeBytes of them, or an error that does not repeat what
// was typed.
func ParseCode(text string) ([]byte, error) {
	if len(text) > 128 {
		return nil, errors.New("the registration code is too long")
	}
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '-' || c == ' ':
		case c >= 'a' && c <= 'z':
			b.WriteByte(c - 'a' + 'A')
		case (c >= 'A' && c <= 'Z') || (c >= '2' && c <= '7'):
			b.WriteByte(c)
		default:
			return nil, errors.New("the registration code holds a character no code has")
		}
	}
	s := b.String()
	if s == "" {
		return nil, errors.New("no registration code was entered")
	}
	if len(s) != codeAlphabet.EncodedLen(CodeBytes) {
		return nil, errors.New("the registration code is not as long as the one printed")
	}
	out, err := codeAlphabet.DecodeString(s)
	if err != nil || len(out) != CodeBytes || codeAlphabet.EncodeToString(out) != s {
		// The last character carries only some bits: refuse the spellings
		// whose unused bits are not zero, so that one code has one text.
		return nil, errors.New("the registration code is not one the page prints")
	}
	return out, nil
}

// codeGate holds the one registration code in force: its SHA-256, when it
// expires, whether it was spent, and the wrong attempts made against it.
type codeGate struct {
	mu      sync.Mutex
	gen     int // counts the codes issued; 0: none yet
	sum     [sha256.Size]byte
	expires time.Time
	spent   bool
	void    bool
	wrong   int         // wrong attempts against this code
	recent  []time.Time // wrong attempts of the last minute, whatever the code
}

// codeError is a refused code: the HTTP status and what the person reads.
func codeError(status int, format string, a ...any) error {
	return &apiError{status, fmt.Sprintf(format, a...)}
}

// issue makes a new code, valid until now+ttl, in place of any earlier
// one, and gives its text. Only the code's SHA-256 stays in memory.
func (g *codeGate) issue(now time.Time, ttl time.Duration) (string, time.Time, error) {
	b := make([]byte, CodeBytes)
	if _, err := rand.Read(b); err != nil {
		return "", time.Time{}, fmt.Errorf("page: making a registration code: %w", err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gen++
	g.sum = sha256.Sum256(b)
	g.expires = now.Add(ttl)
	g.spent, g.void, g.wrong = false, false, 0
	return FormatCode(b), g.expires, nil
}

// pendingCode reports whether a code waits to be used, and until when.
func (g *codeGate) pendingCode(now time.Time) (bool, time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	ok := g.gen > 0 && !g.spent && !g.void && !now.After(g.expires)
	return ok, g.expires
}

// check takes one attempt at the code. It gives the code's generation
// (for spend) when text is the code in force, unspent and unexpired. The
// wrong attempts of the last minute are limited: beyond the limit nothing
// is checked. voided is true when this attempt voided the code.
func (g *codeGate) check(text string, now time.Time) (gen int, voided bool, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	keep := g.recent[:0]
	for _, t := range g.recent {
		if now.Sub(t) < time.Minute {
			keep = append(keep, t)
		}
	}
	g.recent = keep
	if len(g.recent) >= codeWrongPerMinute {
		return 0, false, codeError(http.StatusTooManyRequests,
			"too many wrong registration codes in the last minute: wait a minute and enter it again")
	}
	switch {
	case g.gen == 0:
		return 0, false, codeError(http.StatusGone, "this page issued no registration code: start mcp-executor page again to get one")
	case g.void:
		return 0, false, codeError(http.StatusGone, "the registration code is void after %d wrong codes (something else that reaches the page tried codes): start mcp-executor page again for a new one", codeWrongMax)
	case g.spent:
		return 0, false, codeError(http.StatusGone, "the registration code was used: start mcp-executor page again for a new one")
	case now.After(g.expires):
		return 0, false, codeError(http.StatusGone, "the registration code expired: start mcp-executor page again for a new one")
	}
	b, perr := ParseCode(text)
	var sum [sha256.Size]byte
	if perr == nil {
		sum = sha256.Sum256(b)
	}
	if perr != nil || subtle.ConstantTimeCompare(sum[:], g.sum[:]) != 1 {
		g.recent = append(g.recent, now)
		g.wrong++
		if g.wrong >= codeWrongMax {
			g.void = true
			voided = true
		}
		if perr != nil {
			return 0, voided, codeError(http.StatusForbidden, "%v", perr)
		}
		return 0, voided, codeError(http.StatusForbidden, "the registration code is wrong")
	}
	return g.gen, false, nil
}

// spend uses the code of generation gen up, once: false when it was spent
// or voided meanwhile, or another code replaced it.
func (g *codeGate) spend(gen int) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if gen == 0 || gen != g.gen || g.spent || g.void {
		return false
	}
	g.spent = true
	return true
}
