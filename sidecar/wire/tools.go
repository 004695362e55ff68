package wire

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// FilterTools returns the tools/list result with the entries of its "tools"
// list whose name keep refuses taken out. Every byte of the result outside
// the removed entries stays as the server wrote it (numbers, spacing, member
// order, other members such as nextCursor); only the separators between
// entries change, each kept entry keeping the whitespace written before it.
// An entry with no "name" string is taken out (no rule can name it).
//
// It fails closed: a result it cannot read exactly is an error, never
// passed on — not UTF-8, not one JSON object with a "tools" list, a member
// named twice or two names equal under case folding in any object, a
// number beyond 2^53−1, or an entry whose name member is written in other
// capitals ("NAME"), which a client folding names would read as its name.
func FilterTools(result []byte, keep func(name string) bool) ([]byte, error) {
	if !utf8.Valid(result) {
		return nil, errors.New("tools/list result: not UTF-8")
	}
	c := checker{check: true}
	start := skipWS(result, 0)
	end, err := c.value(result, start, 0)
	if err == nil && skipWS(result, end) != len(result) {
		err = errAt(end, "more after the value")
	}
	if err != nil {
		return nil, fmt.Errorf("tools/list result: %w", err)
	}
	if c.fault != 0 {
		return nil, fmt.Errorf("tools/list result: %s at %s", c.reason, quotePath(Cut(pathAt(result, c.faultAt))))
	}
	if result[start] != '{' {
		return nil, errors.New("tools/list result: not an object")
	}
	var list Span
	if _, err := eachMember(result[:end], start, func(name []byte, _, vs, ve int) bool {
		if string(name) == "tools" {
			list = Span{vs, ve}
			return false
		}
		return true
	}); err != nil {
		return nil, fmt.Errorf("tools/list result: %w", err)
	}
	if !list.Present() || result[list.Start] != '[' {
		return nil, errors.New(`tools/list result: no "tools" list`)
	}
	type seg struct{ from, to int }
	var kept []seg
	all := 0
	folded := -1
	_, err = eachElement(result[:list.End], list.Start, func(segStart, vs, ve int) {
		if folded >= 0 {
			return
		}
		name, ok, other := toolName(result[vs:ve])
		if other {
			folded = all
			return
		}
		all++
		if ok && keep(name) {
			kept = append(kept, seg{segStart, ve})
		}
	})
	if err != nil {
		return nil, fmt.Errorf("tools/list result: %w", err)
	}
	if folded >= 0 {
		return nil, fmt.Errorf("tools/list result: the tool at /tools/%d has a name member in other capitals", folded)
	}
	if len(kept) == all {
		return append([]byte(nil), result...), nil
	}
	// Bytes after the last element up to ']' (its trailing whitespace).
	closeAt := list.End - 1
	tail := closeAt
	for tail > list.Start && isWS(result[tail-1]) {
		tail--
	}
	out := make([]byte, 0, len(result))
	out = append(out, result[:list.Start+1]...)
	for i, s := range kept {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, result[s.from:s.to]...)
	}
	out = append(out, result[tail:]...)
	return out, nil
}

// toolName reads a tools/list entry's name; other is true when the entry
// has a member whose name folds to "name" without being written so.
func toolName(entry []byte) (name string, ok, other bool) {
	if entry[0] != '{' {
		return "", false, false
	}
	// The value was read whole by the checker before: walking it cannot fail.
	_, _ = eachMember(entry, 0, func(n []byte, _, vs, ve int) bool {
		switch {
		case string(n) == "name":
			if entry[vs] == '"' {
				name, ok = string(decodeString(entry[vs+1:ve-1])), true
			}
		case string(foldKey(n)) == "NAME":
			other = true
			return false
		}
		return true
	})
	return name, ok, other
}
