package book

// isJSON reports whether text is one JSON value (RFC 8259) with optional
// whitespace around it, as JavaScript's JSON.parse reads it: with no limit
// on nesting (encoding/json stops at 10,000 levels, the reference does
// not). It works in one pass with a stack of one byte per open container.
// Bytes at or above 0x80 inside a string are taken as they are, as
// encoding/json takes them.
func isJSON(text []byte) bool {
	var stack []byte // '{' or '[' for each open container
	i := 0
	ws := func() {
		for i < len(text) && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r') {
			i++
		}
	}
	for {
		// A value is expected at i.
		ws()
		if i >= len(text) {
			return false
		}
		switch c := text[i]; {
		case c == '{' || c == '[':
			i++
			ws()
			if i < len(text) && (text[i] == '}' && c == '{' || text[i] == ']' && c == '[') {
				i++
				break // an empty container is a whole value
			}
			stack = append(stack, c)
			if c == '{' {
				if !jsonKey(text, &i, ws) {
					return false
				}
			}
			continue
		case c == '"':
			if !jsonString(text, &i) {
				return false
			}
		case c == '-' || c >= '0' && c <= '9':
			if !jsonNumber(text, &i) {
				return false
			}
		default:
			ok := false
			for _, lit := range []string{"true", "false", "null"} {
				if len(text)-i >= len(lit) && string(text[i:i+len(lit)]) == lit {
					i += len(lit)
					ok = true
					break
				}
			}
			if !ok {
				return false
			}
		}
		// A value has ended: close containers or go on to the next member.
		for {
			ws()
			if len(stack) == 0 {
				return i == len(text)
			}
			if i >= len(text) {
				return false
			}
			top := stack[len(stack)-1]
			c := text[i]
			if c == ',' {
				i++
				if top == '{' && !jsonKey(text, &i, ws) {
					return false
				}
				break
			}
			if top == '{' && c == '}' || top == '[' && c == ']' {
				i++
				stack = stack[:len(stack)-1]
				continue
			}
			return false
		}
	}
}

// jsonKey reads a member name and its colon at *i (after whitespace).
func jsonKey(text []byte, i *int, ws func()) bool {
	ws()
	if *i >= len(text) || text[*i] != '"' || !jsonString(text, i) {
		return false
	}
	ws()
	if *i >= len(text) || text[*i] != ':' {
		return false
	}
	*i++
	return true
}

// jsonString reads a string starting at its opening quote at *i.
func jsonString(text []byte, i *int) bool {
	j := *i + 1
	for j < len(text) {
		c := text[j]
		switch {
		case c == '"':
			*i = j + 1
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if j+1 >= len(text) {
				return false
			}
			switch text[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if j+6 > len(text) {
					return false
				}
				for _, h := range text[j+2 : j+6] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return false
					}
				}
				j += 6
			default:
				return false
			}
		default:
			j++
		}
	}
	return false
}

// jsonNumber reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at *i.
func jsonNumber(text []byte, i *int) bool {
	j := *i
	digits := func() int {
		n := 0
		for j < len(text) && text[j] >= '0' && text[j] <= '9' {
			j++
			n++
		}
		return n
	}
	if j < len(text) && text[j] == '-' {
		j++
	}
	if j < len(text) && text[j] == '0' {
		j++
	} else if digits() == 0 {
		return false
	}
	if j < len(text) && text[j] == '.' {
		j++
		if digits() == 0 {
			return false
		}
	}
	if j < len(text) && (text[j] == 'e' || text[j] == 'E') {
		j++
		if j < len(text) && (text[j] == '+' || text[j] == '-') {
			j++
		}
		if digits() == 0 {
			return false
		}
	}
	*i = j
	return true
}
