package wire

import (
	"errors"
	"fmt"
)

// FilterTools returns the tools/list result with the entries of its "tools"
// list whose name keep refuses taken out. Every byte of the result outside
// the removed entries stays as the server wrote it (numbers, spacing, member
// order, other members such as nextCursor); only the separators between
// entries change, each kept entry keeping the whitespace written before it.
// An entry with no "name" string is taken out (no rule can name it). A result
// that is not an object with a "tools" list is an error.
func FilterTools(result []byte, keep func(name string) bool) ([]byte, error) {
	start, end, err := wholeValue(result)
	if err != nil {
		return nil, fmt.Errorf("tools/list result: %w", err)
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
	_, err = eachElement(result[:list.End], list.Start, func(segStart, vs, ve int) {
		all++
		name, ok := toolName(result[vs:ve])
		if ok && keep(name) {
			kept = append(kept, seg{segStart, ve})
		}
	})
	if err != nil {
		return nil, fmt.Errorf("tools/list result: %w", err)
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

func toolName(entry []byte) (string, bool) {
	if entry[0] != '{' {
		return "", false
	}
	var name string
	var ok bool
	eachMember(entry, 0, func(n []byte, _, vs, ve int) bool {
		if string(n) == "name" {
			if entry[vs] == '"' {
				name, ok = string(decodeString(entry[vs+1:ve-1])), true
			}
			return false
		}
		return true
	})
	return name, ok
}
