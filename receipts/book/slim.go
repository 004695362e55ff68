package book

import "bytes"

// A line a checkpoint covers is the very text a full verification took at
// an earlier start (the checkpoint's top fingerprint confirms every byte of
// it, and a book whose first lines do not give that fingerprint is read
// again in full). Its hybrid signatures are taken as checked without being
// read (keySetSignatures), so its parse need not build them: about three
// quarters of a stub line's bytes are the base64url of its two ML-DSA-87
// signatures. blankHybridSignatures gives the line's text with the value of
// every "signature" member of its hybrid records (stub, countersignature,
// refusal, acknowledgement, pass) made "", and nothing else changed; passkey
// records (slip, approval, cancellation) are copied as they are, since
// their signatures are checked on every start. A line that is not of the
// shape such a line has is left to the full parse (ok false).

// hybridMembers are the line members whose values are hybrid records.
var hybridMembers = map[string]bool{"acknowledgement": true, "countersignature": true, "pass": true, "refusal": true, "stub": true}

// blankHybridSignatures writes line, its hybrid signatures blanked, into
// dst[:0] and returns it; ok is false when line is not an object of
// members whose hybrid records have the canonical envelope shape.
func blankHybridSignatures(line, dst []byte) (out []byte, ok bool) {
	out = dst[:0]
	if len(line) < 2 || line[0] != '{' || line[len(line)-1] != '}' {
		return nil, false
	}
	out = append(out, '{')
	i := 1
	for first := true; ; first = false {
		if i >= len(line) {
			return nil, false
		}
		if line[i] == '}' && i == len(line)-1 && !first {
			return append(out, '}'), true
		}
		if !first {
			if line[i] != ',' {
				return nil, false
			}
			out = append(out, ',')
			i++
		}
		name, end, ok := plainString(line, i)
		if !ok || end >= len(line) || line[end] != ':' {
			return nil, false
		}
		out = append(out, line[i:end+1]...)
		i = end + 1
		if hybridMembers[string(name)] {
			if out, i, ok = blankEnvelope(line, i, out); !ok {
				return nil, false
			}
			continue
		}
		vEnd, ok := skipValue(line, i)
		if !ok || vEnd >= len(line) {
			return nil, false
		}
		out = append(out, line[i:vEnd]...)
		i = vEnd
	}
}

// blankEnvelope copies the hybrid envelope at line[i:],
// {"payload":"…","signatures":[{"protected":"…","signature":"…"},…]},
// with each signature's value left out, and returns where it ends.
func blankEnvelope(line []byte, i int, out []byte) ([]byte, int, bool) {
	expect := func(lit string) bool {
		if !bytes.HasPrefix(line[i:], []byte(lit)) {
			return false
		}
		out = append(out, lit...)
		i += len(lit)
		return true
	}
	text := func(keep bool) bool {
		_, end, ok := plainString(line, i)
		if !ok {
			return false
		}
		if keep {
			out = append(out, line[i:end]...)
		} else {
			out = append(out, '"', '"')
		}
		i = end
		return true
	}
	if !expect(`{"payload":`) || !text(true) || !expect(`,"signatures":[`) {
		return nil, 0, false
	}
	for n := 0; ; n++ {
		if n > 0 && !expect(",") {
			return nil, 0, false
		}
		if !expect(`{"protected":`) || !text(true) || !expect(`,"signature":`) || !text(false) || !expect("}") {
			return nil, 0, false
		}
		if i < len(line) && line[i] == ']' {
			break
		}
	}
	if !expect("]}") {
		return nil, 0, false
	}
	return out, i, true
}

// plainString reads the JSON string at line[i:] that holds no escape, and
// returns its body and where it ends (after its closing quote).
func plainString(line []byte, i int) (body []byte, end int, ok bool) {
	if i >= len(line) || line[i] != '"' {
		return nil, 0, false
	}
	n := bytes.IndexByte(line[i+1:], '"')
	if n < 0 {
		return nil, 0, false
	}
	body = line[i+1 : i+1+n]
	if bytes.IndexByte(body, '\\') >= 0 {
		return nil, 0, false
	}
	return body, i + 2 + n, true
}

// skipValue returns where the JSON value at line[i:] ends (just after
// it), for text with no whitespace between tokens, as canonical text is;
// false when it does not end within line. What it copies is parsed
// strictly afterwards, so it need only find the value's end.
func skipValue(line []byte, i int) (int, bool) {
	if i >= len(line) {
		return 0, false
	}
	switch line[i] {
	case '"':
		return skipString(line, i)
	case '{', '[':
		depth := 0
		for i < len(line) {
			switch line[i] {
			case '"':
				end, ok := skipString(line, i)
				if !ok {
					return 0, false
				}
				i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
			i++
		}
		return 0, false
	default: // a number, true, false or null
		for i < len(line) && line[i] != ',' && line[i] != '}' && line[i] != ']' {
			i++
		}
		return i, i < len(line)
	}
}

// skipString returns where the JSON string at line[i:] ends.
func skipString(line []byte, i int) (int, bool) {
	for i++; i < len(line); {
		switch line[i] {
		case '\\':
			i += 2
		case '"':
			return i + 1, true
		default:
			i++
		}
	}
	return 0, false
}
