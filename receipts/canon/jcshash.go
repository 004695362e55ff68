package canon

import (
	"bufio"
	"crypto/sha256"
	"errors"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
)

// errHash is any text the streaming hasher does not take; JCSFingerprint
// then takes the library's way, whose verdict and error stand.
var errHash = errors.New("canon: the streaming hasher does not take this text")

// jcsHash writes the RFC 8785 form of raw into a SHA-256 as it reads raw,
// never building the canonical text: strings and numbers go out from their
// place in raw, and an object keeps only its members' names and where
// their values start, to write them sorted. It is strict: what it does not
// take (errHash) may still be JSON the library takes, and JCSFingerprint
// falls back to the library then; what it takes, the library puts in the
// same form (FuzzJCSHash holds them together). raw has passed
// checkJCSInput, so nesting is bounded.
func jcsHash(raw []byte) ([]byte, error) {
	h := sha256.New()
	w, ok := jcsWriters.Get().(*bufio.Writer)
	if !ok {
		w = bufio.NewWriterSize(nil, 4<<10)
	}
	w.Reset(h)
	defer func() {
		w.Reset(nil)
		jcsWriters.Put(w)
	}()
	s := &jcsScan{raw: raw}
	s.ws()
	end, err := s.value(s.i, w)
	if err != nil {
		return nil, err
	}
	s.i = end
	s.ws()
	if s.i != len(raw) {
		return nil, errHash
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}

// jcsWriters keeps the buffers jcsHash writes the canonical form through.
var jcsWriters sync.Pool // of *bufio.Writer

type jcsScan struct {
	raw []byte
	i   int
}

// ws skips JSON whitespace at s.i.
func (s *jcsScan) ws() {
	for s.i < len(s.raw) {
		switch s.raw[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value reads the value starting at i (no whitespace before it) and writes
// its canonical form to w, or only checks it when w is nil. It returns
// where the value ends.
func (s *jcsScan) value(i int, w *bufio.Writer) (int, error) {
	if i >= len(s.raw) {
		return 0, errHash
	}
	switch s.raw[i] {
	case '{':
		return s.object(i, w)
	case '[':
		return s.array(i, w)
	case '"':
		return s.str(i, w)
	default:
		return s.scalar(i, w)
	}
}

func (s *jcsScan) array(i int, w *bufio.Writer) (int, error) {
	s.i = i + 1
	put(w, '[')
	for n := 0; ; n++ {
		s.ws()
		if s.i < len(s.raw) && s.raw[s.i] == ']' && n == 0 {
			put(w, ']')
			return s.i + 1, nil
		}
		if n > 0 {
			put(w, ',')
		}
		end, err := s.value(s.i, w)
		if err != nil {
			return 0, err
		}
		s.i = end
		s.ws()
		if s.i >= len(s.raw) {
			return 0, errHash
		}
		switch s.raw[s.i] {
		case ',':
			s.i++
		case ']':
			put(w, ']')
			return s.i + 1, nil
		default:
			return 0, errHash
		}
	}
}

// member is an object member's name, its UTF-16 sort key and where its
// value starts.
type jcsMember struct {
	name  string
	key   []uint16
	start int
}

func (s *jcsScan) object(i int, w *bufio.Writer) (int, error) {
	s.i = i + 1
	var members []jcsMember
	for n := 0; ; n++ {
		s.ws()
		if s.i < len(s.raw) && s.raw[s.i] == '}' && n == 0 {
			break
		}
		if s.i >= len(s.raw) || s.raw[s.i] != '"' {
			return 0, errHash
		}
		name, end, err := s.decode(s.i)
		if err != nil {
			return 0, err
		}
		s.i = end
		s.ws()
		if s.i >= len(s.raw) || s.raw[s.i] != ':' {
			return 0, errHash
		}
		s.i++
		s.ws()
		start := s.i
		if end, err = s.value(start, nil); err != nil {
			return 0, err
		}
		members = append(members, jcsMember{name: name, key: utf16.Encode([]rune(name)), start: start})
		s.i = end
		s.ws()
		if s.i >= len(s.raw) {
			return 0, errHash
		}
		if s.raw[s.i] == '}' {
			break
		}
		if s.raw[s.i] != ',' {
			return 0, errHash
		}
		s.i++
	}
	end := s.i + 1
	if w == nil {
		return end, nil
	}
	slices.SortFunc(members, func(a, b jcsMember) int { return slices.Compare(a.key, b.key) })
	put(w, '{')
	for k, m := range members {
		if k > 0 && slices.Equal(members[k-1].key, m.key) {
			return 0, errHash // a repeated member name
		}
		if k > 0 {
			put(w, ',')
		}
		writeJCSString(w, m.name)
		put(w, ':')
		if _, err := s.value(m.start, w); err != nil {
			return 0, err
		}
	}
	put(w, '}')
	return end, nil
}

// str reads the string at i and writes it in canonical form.
func (s *jcsScan) str(i int, w *bufio.Writer) (int, error) {
	if w == nil {
		_, end, err := s.scanString(i, nil, false)
		return end, err
	}
	put(w, '"')
	_, end, err := s.scanString(i, w, false)
	put(w, '"')
	return end, err
}

// decode returns the text of the string at i, for a member name.
func (s *jcsScan) decode(i int) (string, int, error) {
	b, end, err := s.scanString(i, nil, true)
	return string(b), end, err
}

// scanString reads the string whose quote is at i. With w it writes the
// decoded text escaped as RFC 8785 does; with keep it also returns the
// decoded text. It returns where the string ends (after its quote).
func (s *jcsScan) scanString(i int, w *bufio.Writer, keeping bool) ([]byte, int, error) {
	var text []byte
	emit := func(b []byte) {
		if keeping {
			text = append(text, b...)
		}
		if w != nil {
			writeJCSText(w, b)
		}
	}
	raw := s.raw
	i++
	for {
		// A run of bytes that need no decoding.
		j := i
		for j < len(raw) && raw[j] >= 0x20 && raw[j] != '"' && raw[j] != '\\' && raw[j] < 0x80 {
			j++
		}
		if j > i {
			emit(raw[i:j])
			i = j
		}
		if i >= len(raw) {
			return nil, 0, errHash
		}
		switch c := raw[i]; {
		case c == '"':
			return text, i + 1, nil
		case c < 0x20:
			return nil, 0, errHash
		case c >= 0x80:
			r, size := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && size <= 1 {
				return nil, 0, errHash
			}
			emit(raw[i : i+size])
			i += size
		default: // a backslash
			if i+1 >= len(raw) {
				return nil, 0, errHash
			}
			var one [utf8.UTFMax]byte
			switch e := raw[i+1]; e {
			case '"', '\\', '/':
				one[0] = e
				emit(one[:1])
				i += 2
			case 'b', 'f', 'n', 'r', 't':
				one[0] = jcsUnescape(e)
				emit(one[:1])
				i += 2
			case 'u':
				u, ok := jcsHex4(raw, i+2)
				if !ok {
					return nil, 0, errHash
				}
				i += 6
				r := rune(u)
				if utf16.IsSurrogate(r) {
					if u > 0xDBFF || i+1 >= len(raw) || raw[i] != '\\' || raw[i+1] != 'u' {
						return nil, 0, errHash
					}
					lo, ok := jcsHex4(raw, i+2)
					if !ok || lo < 0xDC00 || lo > 0xDFFF {
						return nil, 0, errHash
					}
					i += 6
					r = utf16.DecodeRune(r, rune(lo))
				}
				n := utf8.EncodeRune(one[:], r)
				emit(one[:n])
			default:
				return nil, 0, errHash
			}
		}
	}
}

// jcsUnescape is the byte a two-letter escape stands for.
func jcsUnescape(e byte) byte {
	switch e {
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	}
	return '\t'
}

// jcsHex4 reads four hex digits at i.
func jcsHex4(raw []byte, i int) (uint16, bool) {
	if i+4 > len(raw) {
		return 0, false
	}
	var u uint16
	for _, c := range raw[i : i+4] {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		u = u<<4 | uint16(d)
	}
	return u, true
}

// jcsNumber is the RFC 8259 number grammar.
var jcsNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// scalar reads a literal or a number at i and writes its canonical form.
func (s *jcsScan) scalar(i int, w *bufio.Writer) (int, error) {
	j := i
	for j < len(s.raw) {
		c := s.raw[j]
		if c == ',' || c == ']' || c == '}' || c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			break
		}
		j++
	}
	tok := s.raw[i:j]
	switch string(tok) {
	case "true", "false", "null":
		if w != nil {
			_, _ = w.Write(tok)
		}
		return j, nil
	}
	if !jcsNumber.Match(tok) {
		return 0, errHash
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil {
		return 0, errHash
	}
	out, err := jcs.NumberToJSON(f)
	if err != nil {
		return 0, errHash
	}
	if w != nil {
		_, _ = w.WriteString(out)
	}
	return j, nil
}

// put writes one byte to w when there is one.
func put(w *bufio.Writer, c byte) {
	if w != nil {
		_ = w.WriteByte(c)
	}
}

// writeJCSString writes text quoted and escaped as RFC 8785 does.
func writeJCSString(w *bufio.Writer, text string) {
	_ = w.WriteByte('"')
	writeJCSText(w, []byte(text))
	_ = w.WriteByte('"')
}

// writeJCSText writes decoded text escaped as RFC 8785 does: the two-letter
// escapes of JSON, \u00xx for the other control characters, and every
// other byte as it is.
func writeJCSText(w *bufio.Writer, b []byte) {
	start := 0
	for k, c := range b {
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		_, _ = w.Write(b[start:k])
		start = k + 1
		switch c {
		case '"', '\\':
			_, _ = w.Write([]byte{'\\', c})
		case '\b':
			_, _ = w.WriteString(`\b`)
		case '\f':
			_, _ = w.WriteString(`\f`)
		case '\n':
			_, _ = w.WriteString(`\n`)
		case '\r':
			_, _ = w.WriteString(`\r`)
		case '\t':
			_, _ = w.WriteString(`\t`)
		default:
			const hexDigits = "0123456789abcdef"
			_, _ = w.Write([]byte{'\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf]})
		}
	}
	_, _ = w.Write(b[start:])
}
