package copylog

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
)

// KeySize is the length of the copy key in bytes.
const KeySize = 32

// maxLine is the longest line the reader accepts; the executor's own lines
// are a few kilobytes at most.
const maxLine = 1 << 20

// ReadFile reads and verifies the copy at path without locking it or
// writing anything (for compare, which may run beside the executor). The
// file must exist. Errors are as for [Verify], with the path named.
func ReadFile(path string, key []byte, name string) ([]Line, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading copy %s: %w", path, err)
	}
	lines, err := verify(data, key, name, path)
	if err != nil {
		return nil, err
	}
	return lines, nil
}

// Verify checks every line of a copy's contents under key and returns the
// lines. It fails, with a *LineError naming the first faulty line where
// there is one, wrapping [ErrKeyMissing], [ErrWrongKey], [ErrTampered],
// [ErrOtherExecutor] or [ErrCutLine].
func Verify(data []byte, key []byte, name string) ([]Line, error) {
	return verify(data, key, name, "")
}

// tagged is one complete line as read, before the sequence is checked.
type tagged struct {
	raw  []byte
	line Line
	err  *LineError // set when the line is not a copy line or its tag fails
}

func verify(data []byte, key []byte, name, path string) ([]Line, error) {
	if len(data) == 0 {
		return nil, nil
	}
	where := "copy"
	if path != "" {
		where = "copy " + path
	}
	if len(key) == 0 {
		return nil, fmt.Errorf("%s holds lines but no copy key was given: %w", where, ErrKeyMissing)
	}
	if len(key) != KeySize {
		return nil, fmt.Errorf("%s: the copy key is %d bytes, not %d", where, len(key), KeySize)
	}
	if name == "" {
		return nil, errors.New("no executor name given for the copy")
	}
	lineErr := func(n int, sentinel error, format string, a ...any) *LineError {
		return &LineError{Path: path, Line: n, Reason: fmt.Sprintf(format, a...), Err: sentinel}
	}

	var read []tagged
	rest := data
	checked := 0
	for len(rest) > 0 {
		n := len(read) + 1
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break // a cut last line; reported after the complete lines
		}
		raw := rest[:i]
		rest = rest[i+1:]
		t := tagged{raw: raw}
		t.line, t.err = readLine(raw, key)
		if t.err != nil {
			t.err.Path, t.err.Line = path, n
		} else {
			checked++
		}
		read = append(read, t)
	}

	for _, t := range read {
		if t.err == nil {
			continue
		}
		if checked == 0 && errors.Is(t.err.Err, errTagFails) {
			return nil, lineErr(t.err.Line, ErrWrongKey, "no line checks under the copy key given: the key is not this copy's, or every line was changed")
		}
		if errors.Is(t.err.Err, errTagFails) {
			t.err.Err = ErrTampered
		}
		return nil, t.err
	}

	lines := make([]Line, len(read))
	for i, t := range read {
		if t.line.Name != name {
			return nil, lineErr(i+1, ErrOtherExecutor, "the line was written by executor %q, not %q", t.line.Name, name)
		}
		lines[i] = t.line
	}
	if err := checkSequence(read, path); err != nil {
		return nil, err
	}
	if len(rest) > 0 {
		return nil, lineErr(len(read)+1, ErrCutLine, "the last line has no end (LF): a stop cut it while it was being written")
	}
	return lines, nil
}

// errTagFails marks a line whose tag does not check, before it is known
// whether any line checks.
var errTagFails = errors.New("tag does not check")

// readLine parses one line and checks its tag. Faults come back without
// path and line number.
func readLine(raw []byte, key []byte) (Line, *LineError) {
	fault := func(sentinel error, format string, a ...any) (Line, *LineError) {
		return Line{}, &LineError{Reason: fmt.Sprintf(format, a...), Err: sentinel}
	}
	if len(raw) == 0 {
		return fault(ErrTampered, "the line is empty")
	}
	if len(raw) > maxLine {
		return fault(ErrTampered, "the line is longer than %d bytes", maxLine)
	}
	v, err := canon.Parse(raw)
	if err != nil {
		return fault(ErrTampered, "not a copy line (%v)", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return fault(ErrTampered, "not a copy line (not an object)")
	}
	tagText, ok := obj["tag"].(string)
	if !ok {
		return fault(ErrTampered, "the line has no tag")
	}
	tag, err := canon.UnB64(tagText)
	if err != nil || len(tag) != sha256.Size {
		return fault(ErrTampered, "the line's tag is not 32 bytes of base64url")
	}
	body := make(map[string]any, len(obj)-1)
	for k, v := range obj {
		if k != "tag" {
			body[k] = v
		}
	}
	input, err := canon.Marshal(body)
	if err != nil {
		return fault(ErrTampered, "not a copy line (%v)", err)
	}
	if !hmac.Equal(tag, sum(key, input)) {
		if other, ok := obj["name"].(string); ok {
			return fault(errTagFails, "the tag does not check under the copy key: the line was changed (it names executor %q)", other)
		}
		return fault(errTagFails, "the tag does not check under the copy key: the line was changed")
	}
	ln, err := decodeLine(obj)
	if err != nil {
		return fault(ErrTampered, "the line checks but is not a copy line: %v", err)
	}
	return ln, nil
}

func sum(key, input []byte) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write(input)
	return mac.Sum(nil)
}

// checkSequence checks that the lines carry 1, 2, 3, … and, where they do
// not, says whether a line was taken out, put twice or moved.
func checkSequence(read []tagged, path string) error {
	at := make(map[int64]int, len(read)) // seq -> first line number carrying it
	for i, t := range read {
		if _, seen := at[t.line.Seq]; !seen {
			at[t.line.Seq] = i + 1
		}
	}
	for i, t := range read {
		n := i + 1
		want := int64(n)
		got := t.line.Seq
		if got == want {
			continue
		}
		fail := func(format string, a ...any) error {
			return &LineError{Path: path, Line: n, Reason: fmt.Sprintf(format, a...), Err: ErrTampered}
		}
		if first := at[got]; first < n {
			if bytes.Equal(read[first-1].raw, t.raw) {
				return fail("the line repeats line %d (number %d): a line was put twice", first, got)
			}
			return fail("the line carries number %d, which line %d already carries", got, first)
		}
		if later, ok := at[want]; ok && later > n {
			return fail("the line carries number %d where %d belongs; number %d is at line %d: a line was moved", got, want, want, later)
		}
		return fail("the line carries number %d where %d belongs: a line was taken out", got, want)
	}
	return nil
}
