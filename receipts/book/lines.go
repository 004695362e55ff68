package book

import (
	"bytes"
	"errors"
	"sort"
	"strings"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
)

// splitLines splits a book into its lines. A missing line feed after the
// last line is allowed. More than MaxEntries lines is refused at once, so
// a flood of line feeds costs nothing.
func splitLines(text []byte) ([][]byte, error) {
	var lines [][]byte
	for at := 0; at < len(text); {
		if len(lines) >= MaxEntries {
			return nil, problem.New("too-large", "the book holds more than 100,000 entries")
		}
		end := bytes.IndexByte(text[at:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += at
		}
		lines = append(lines, text[at:end])
		at = end + 1
	}
	return lines, nil
}

var bom = []byte{0xEF, 0xBB, 0xBF}

// readLineValue applies the line rules: size, no empty line, no BOM, no CR,
// canonical JSON. It returns the line's object (nil if it is not one) and
// its member names, sorted and joined by commas.
func readLineValue(line []byte) (map[string]any, string, error) {
	if len(line) > MaxLineBytes {
		return nil, "", problem.New("too-large", "the line is longer than 131,072 bytes")
	}
	if len(line) == 0 {
		return nil, "", problem.New("not-json", "the line is empty: a book holds no empty lines")
	}
	if bytes.HasPrefix(line, bom) {
		return nil, "", problem.New("not-json", "the line starts with a byte-order mark, which a book may not hold")
	}
	if line[len(line)-1] == '\r' {
		return nil, "", problem.New("line-not-canonical", "the line ends with a carriage return: a line ends with a line feed alone")
	}
	v, err := canon.Parse(line)
	if err != nil {
		if !isJSON(line) {
			return nil, "", problem.New("not-json", "the line is not JSON")
		}
		return nil, "", problem.New("line-not-canonical", "the line is not canonical JSON: %s", messageOf(err))
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, "", nil
	}
	names := make([]string, 0, len(obj))
	for k := range obj {
		names = append(names, k)
	}
	sort.Strings(names)
	return obj, strings.Join(names, ","), nil
}

// stubEntries are the member sets of a stub line.
var stubEntries = map[string]bool{
	"stub": true, "countersignature,stub": true, "approval,stub": true, "approval,countersignature,stub": true,
}

// unsupportedKinds are the kinds the format knows that this checker does
// not read, by member set.
var unsupportedKinds = map[string]string{
	"terms":               "terms",
	"cancellation,stamps": "cancellation",
	"vouching":            "vouching",
	"withdrawal":          "withdrawal",
}

func messageOf(err error) string {
	if pe, ok := errors.AsType[*problem.Error](err); ok {
		return pe.Message
	}
	return err.Error()
}

// findingOf turns an error into a finding with its code.
func findingOf(err error) Finding {
	return Finding{Code: problem.Code(err), Message: messageOf(err)}
}
