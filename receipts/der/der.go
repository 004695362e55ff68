// Package der is a small, strict reader of DER (ITU-T X.690), the byte
// layout of time-stamps and certificates (format description, section
// 21.2, rule 1). It reads and never writes. Anything not in the one form
// DER allows is refused with the problem code "stamp-bad-data": a long
// tag, an indefinite or overlong length, a part longer than what holds it,
// a whole number or object identifier not in its shortest form, a truth
// value other than 00 or ff, a null that is not empty, a bit string with
// more than seven unused bits, and more than 4,000 parts or 24 levels.
//
// It follows the reference reader's rules and words, so that the same bytes
// get the same answer from both.
package der

import (
	"encoding/hex"
	"math"
	"strconv"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
)

// CodeBadData is the problem code of every fault in a time-stamp's layout.
const CodeBadData = "stamp-bad-data"

// Bad is the "stamp-bad-data" problem with why after the format's words.
func Bad(why string) error {
	return problem.New(CodeBadData, "A time-stamp is not laid out as its standard sets out: %s", why)
}

// The tags this reader meets.
const (
	Boolean         byte = 0x01
	Integer         byte = 0x02
	BitString       byte = 0x03
	OctetString     byte = 0x04
	Null            byte = 0x05
	OID             byte = 0x06
	UTCTime         byte = 0x17
	GeneralizedTime byte = 0x18
	Sequence        byte = 0x30
	Set             byte = 0x31
	Context0        byte = 0xa0
	Context1        byte = 0xa1
	Context3        byte = 0xa3
	constructed     byte = 0x20
)

// Element is one element of a DER text: its tag, where it begins (From),
// and where its content begins and ends.
type Element struct {
	Tag              byte
	From, Start, End int
}

// Read reads the element that begins at at, which must end by end.
func Read(b []byte, at, end int) (Element, error) {
	if at+2 > end {
		return Element{}, Bad("it is cut short.")
	}
	tag := b[at]
	if tag&0x1f == 0x1f {
		return Element{}, Bad("it holds a tag of a kind that is not used here.")
	}
	length := int(b[at+1])
	start := at + 2
	if length&0x80 != 0 {
		count := length & 0x7f
		// Never the indefinite form, and never more than four bytes of length.
		if count == 0 || count > 4 {
			return Element{}, Bad("it holds a length in a form that is not allowed.")
		}
		if start+count > end {
			return Element{}, Bad("it is cut short.")
		}
		length = 0
		for i := range count {
			length = length*256 + int(b[start+i])
		}
		if b[start] == 0 || length < 128 {
			return Element{}, Bad("it holds a length that is not in its shortest form.")
		}
		start += count
	}
	if length > end-start {
		return Element{}, Bad("a part is longer than what holds it.")
	}
	return Element{Tag: tag, From: at, Start: start, End: start + length}, nil
}

// Children reads the elements inside parent, in order; more than most is
// refused.
func Children(b []byte, parent Element, most int) ([]Element, error) {
	var out []Element
	for at := parent.Start; at < parent.End; {
		if len(out) >= most {
			return nil, Bad("a part holds too many items.")
		}
		child, err := Read(b, at, parent.End)
		if err != nil {
			return nil, err
		}
		out = append(out, child)
		at = child.End
	}
	return out, nil
}

// At returns the i-th element of list, or nil past its end.
func At(list []Element, i int) *Element {
	if i < 0 || i >= len(list) {
		return nil
	}
	return &list[i]
}

// Expect confirms that e is there and has tag, and returns it; what names it
// in the refusal.
func Expect(e *Element, tag byte, what string) (Element, error) {
	if e == nil || e.Tag != tag {
		return Element{}, Bad(what + " is missing or of the wrong kind.")
	}
	return *e, nil
}

// Content is the content bytes of e.
func Content(b []byte, e Element) []byte { return b[e.Start:e.End] }

// Whole is the whole of e, tag and length included.
func Whole(b []byte, e Element) []byte { return b[e.From:e.End] }

// Hex is the content of e in lower-case hexadecimal: how object
// identifiers are compared.
func Hex(b []byte, e Element) string { return hex.EncodeToString(Content(b, e)) }

// Validate walks e and everything inside it and refuses anything that is
// not strict DER. Parts a checker does not otherwise read are read here
// too, so that two checkers cannot disagree about whether bytes are well
// formed.
func Validate(b []byte, e Element) error {
	budget := 4000
	var walk func(e Element, depth int) error
	walk = func(e Element, depth int) error {
		budget--
		if budget < 0 || depth > 24 {
			return Bad("it holds too many parts, or parts nested too deeply.")
		}
		if e.Tag&constructed != 0 {
			for at := e.Start; at < e.End; {
				child, err := Read(b, at, e.End)
				if err != nil {
					return err
				}
				if err := walk(child, depth+1); err != nil {
					return err
				}
				at = child.End
			}
			return nil
		}
		c := Content(b, e)
		switch e.Tag {
		case Integer:
			if len(c) == 0 {
				return Bad("a whole number is empty.")
			}
			if len(c) > 1 && ((c[0] == 0x00 && c[1]&0x80 == 0) || (c[0] == 0xff && c[1]&0x80 != 0)) {
				return Bad("a whole number is not in its shortest form.")
			}
		case OID:
			if len(c) == 0 || c[len(c)-1]&0x80 != 0 {
				return Bad("an object identifier is empty or cut short.")
			}
			for i, x := range c {
				if x == 0x80 && (i == 0 || c[i-1]&0x80 == 0) {
					return Bad("an object identifier is not in its shortest form.")
				}
			}
		case Boolean:
			if len(c) != 1 || (c[0] != 0x00 && c[0] != 0xff) {
				return Bad("a truth value is not written as DER allows.")
			}
		case Null:
			if len(c) != 0 {
				return Bad("an empty value is not empty.")
			}
		case BitString:
			if len(c) == 0 || c[0] > 7 {
				return Bad("a string of bits is not written as DER allows.")
			}
		}
		return nil
	}
	return walk(e, 0)
}

// Time reads a time in the two forms DER allows, "YYMMDDHHMMSSZ"
// (UTCTime, years 1950 to 2049) and "YYYYMMDDHHMMSS[.f]Z"
// (GeneralizedTime, a fraction of 1 to 9 digits with no trailing zero), as
// milliseconds since 1970, the fraction rounded down. A moment that does
// not exist is refused, and so is a GeneralizedTime year before 0100, which
// the reference reads as not existing.
func Time(b []byte, e Element) (int64, error) {
	text := Content(b, e)
	form := func() (int64, error) { return 0, Bad("a time is not written in the form DER allows.") }
	digits := func(s []byte) (int, bool) {
		n := 0
		for _, c := range s {
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, len(s) > 0
	}
	var y, rest int
	switch e.Tag {
	case UTCTime:
		if len(text) != 13 || text[12] != 'Z' {
			return form()
		}
		yy, ok := digits(text[:2])
		if !ok {
			return form()
		}
		if yy < 50 {
			y = 2000 + yy
		} else {
			y = 1900 + yy
		}
		rest = 2
	case GeneralizedTime:
		if len(text) < 15 || text[len(text)-1] != 'Z' {
			return form()
		}
		var ok bool
		if y, ok = digits(text[:4]); !ok {
			return form()
		}
		rest = 4
	default:
		return form()
	}
	var f [5]int
	for i := range f {
		v, ok := digits(text[rest+2*i : rest+2*i+2])
		if !ok {
			return form()
		}
		f[i] = v
	}
	ms := 0.0
	tail := text[rest+10 : len(text)-1]
	if len(tail) > 0 {
		if e.Tag == UTCTime || tail[0] != '.' || len(tail) < 2 || len(tail) > 10 {
			return form()
		}
		if _, ok := digits(tail[1:]); !ok || tail[len(tail)-1] == '0' {
			return form()
		}
		frac, err := strconv.ParseFloat("0."+string(tail[1:]), 64)
		if err != nil {
			return form()
		}
		ms = math.Floor(frac * 1000)
	}
	mo, d, h, mi, s := f[0], f[1], f[2], f[3], f[4]
	t := time.Date(y, time.Month(mo), d, h, mi, s, 0, time.UTC)
	if y < 100 || t.Year() != y || int(t.Month()) != mo || t.Day() != d || h > 23 || mi > 59 || s > 59 {
		return 0, Bad("a time names a moment that does not exist.")
	}
	return t.UnixMilli() + int64(ms), nil
}

// ECDSAToRaw turns an ECDSA signature from its DER form (two positive whole
// numbers) into the two numbers side by side, size bytes each (32 for
// P-256, 48 for P-384).
func ECDSAToRaw(sig []byte, size int) ([]byte, error) {
	outer, err := Read(sig, 0, len(sig))
	if err != nil {
		return nil, err
	}
	if _, err := Expect(&outer, Sequence, "the signature"); err != nil {
		return nil, err
	}
	if outer.End != len(sig) {
		return nil, Bad("a signature has bytes left over.")
	}
	parts, err := Children(sig, outer, 2)
	if err != nil {
		return nil, err
	}
	if len(parts) != 2 {
		return nil, Bad("a signature does not hold two numbers.")
	}
	out := make([]byte, 2*size)
	for i := range parts {
		if _, err := Expect(&parts[i], Integer, "a number of the signature"); err != nil {
			return nil, err
		}
		digits := Content(sig, parts[i])
		if len(digits) == 0 || digits[0]&0x80 != 0 {
			return nil, Bad("a signature holds a number that is not positive.")
		}
		if len(digits) > 1 && digits[0] == 0 && digits[1]&0x80 == 0 {
			return nil, Bad("a signature holds a number not in its shortest form.")
		}
		if digits[0] == 0 {
			digits = digits[1:]
		}
		if len(digits) > size {
			return nil, Bad("a signature holds a number that is too large.")
		}
		copy(out[i*size+size-len(digits):], digits)
	}
	return out, nil
}
