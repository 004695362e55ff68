package wire

// MaxSafeInt is the largest whole number every JSON reader holds exactly.
const MaxSafeInt = 1<<53 - 1

const maxSafeDigits = "9007199254740991"

// scanNumber scans a number by the RFC 8259 grammar at b[i].
func scanNumber(b []byte, i int) (int, error) {
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return i, errAt(start, "bad number")
	}
	if i < len(b) && b[i] == '.' {
		i++
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return i, errAt(start, "bad number")
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return i, errAt(start, "bad number")
		}
	}
	return i, nil
}

// decimal is a number token read as its digits: the value is
// 0.d1d2d3… × 10^point, where the digits run from the first non-zero one.
type decimal struct {
	neg    bool
	intd   []byte // integer-part digits as written
	fracd  []byte // fraction digits as written
	n      int    // len(intd) + len(fracd)
	first  int    // index in digits of the first non-zero digit; -1 for zero
	last   int    // index of the last non-zero digit
	point  int64  // digits before the decimal point, counted from first, after the exponent
	intLen int    // digits of the written integer part
	exp    int64  // written exponent, clamped
}

// at gives digit k of the integer part followed by the fraction part.
func (d *decimal) at(k int) byte {
	if k < len(d.intd) {
		return d.intd[k]
	}
	return d.fracd[k-len(d.intd)]
}

// readDecimal splits a token scanNumber accepted; the parts alias tok.
func readDecimal(tok []byte) decimal {
	var d decimal
	i := 0
	if tok[0] == '-' {
		d.neg = true
		i++
	}
	j := i
	for j < len(tok) && tok[j] >= '0' && tok[j] <= '9' {
		j++
	}
	d.intd = tok[i:j]
	d.intLen = j - i
	if j < len(tok) && tok[j] == '.' {
		k := j + 1
		for k < len(tok) && tok[k] >= '0' && tok[k] <= '9' {
			k++
		}
		d.fracd = tok[j+1 : k]
		j = k
	}
	d.n = len(d.intd) + len(d.fracd)
	if j < len(tok) && (tok[j] == 'e' || tok[j] == 'E') {
		j++
		neg := false
		if tok[j] == '+' || tok[j] == '-' {
			neg = tok[j] == '-'
			j++
		}
		for ; j < len(tok); j++ {
			if d.exp < 1<<40 {
				d.exp = d.exp*10 + int64(tok[j]-'0')
			}
		}
		if neg {
			d.exp = -d.exp
		}
	}
	d.first, d.last = -1, -1
	for k := 0; k < d.n; k++ {
		if d.at(k) != '0' {
			if d.first < 0 {
				d.first = k
			}
			d.last = k
		}
	}
	if d.first >= 0 {
		d.point = int64(d.intLen-d.first) + d.exp
	}
	return d
}

func (d decimal) zero() bool { return d.first < 0 }

// integer reports whether the value has no fraction.
func (d decimal) integer() bool {
	if d.zero() {
		return true
	}
	// place of the last non-zero digit: 10^(intLen-1-last+exp)
	return int64(d.intLen-1-d.last)+d.exp >= 0
}

// beyond reports whether the magnitude is above MaxSafeInt.
func (d decimal) beyond() bool {
	if d.zero() || d.point < 16 {
		return false
	}
	if d.point > 16 {
		return true
	}
	// 16 digits in the integer part: compare them with MaxSafeInt.
	for k := 0; k < 16; k++ {
		c := byte('0')
		if d.first+k < d.n {
			c = d.at(d.first + k)
		}
		if c != maxSafeDigits[k] {
			return c > maxSafeDigits[k]
		}
	}
	return d.last >= d.first+16 // equal to MaxSafeInt and something after it
}

// value gives the magnitude of an integer that is not beyond MaxSafeInt.
func (d decimal) value() int64 {
	var v int64
	for k := int64(0); k < d.point; k++ {
		c := byte('0')
		if d.first+int(k) < d.n {
			c = d.at(d.first + int(k))
		}
		v = v*10 + int64(c-'0')
	}
	return v
}

func beyondSafe(tok []byte) bool {
	// Fast path: short plain integers.
	if len(tok) < 16 {
		plain := true
		for _, c := range tok {
			if c == '.' || c == 'e' || c == 'E' {
				plain = false
				break
			}
		}
		if plain {
			return false
		}
	}
	return readDecimal(tok).beyond()
}
