package copylog

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
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

func verify(data []byte, key []byte, name, path string) ([]Line, error) {
	var lines []Line
	if _, _, err := verifyStream(bytes.NewReader(data), key, name, path, func(ln Line) error {
		lines = append(lines, ln)
		return nil
	}); err != nil {
		return nil, err
	}
	return lines, nil
}

// errTagFails marks a line whose tag does not check, before it is known
// whether any line checks.
var errTagFails = errors.New("tag does not check")

// readLine parses one line and checks its tag. Faults come back without
// path and line number.
func readLine(raw []byte, mac hash.Hash) (Line, *LineError) {
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
	if !tagChecks(raw, obj, tagText, tag, mac) {
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

// tagChecks is whether tag is the HMAC of the line's body (obj without its
// tag member) in canonical form. A line as the executor wrote it is that
// canonical form with the tag member put in: for it the body's bytes are
// raw without that member, and no canonical form is made again (which
// costs most of a line's reading). Any other line (a tag member not found
// once as written, or a tag that does not check over those bytes) is held
// to the body's canonical form, so that the verdict is the same either way:
// bytes the tag checks over are the canonical body the key's holder
// tagged, which is what parsing raw without its tag gives.
func tagChecks(raw []byte, obj map[string]any, tagText string, tag []byte, mac hash.Hash) bool {
	if i, j, ok := tagMember(raw, tagText); ok {
		mac.Reset()
		mac.Write(raw[:i])
		mac.Write(raw[j:])
		if hmac.Equal(tag, mac.Sum(nil)) {
			return true
		}
	}
	body := make(map[string]any, len(obj)-1)
	for k, v := range obj {
		if k != "tag" {
			body[k] = v
		}
	}
	input, err := canon.Marshal(body)
	if err != nil {
		return false
	}
	mac.Reset()
	mac.Write(input)
	return hmac.Equal(tag, mac.Sum(nil))
}

// tagMember finds the member "tag":"<tagText>" in raw with the comma that
// joined it: raw[:i] and raw[j:] are the line without it. ok is false when
// that member is not in raw exactly once.
func tagMember(raw []byte, tagText string) (i, j int, ok bool) {
	member := make([]byte, 0, len(tagText)+9)
	member = append(append(append(member, `"tag":"`...), tagText...), '"')
	i = bytes.Index(raw, member)
	if i < 0 || bytes.Contains(raw[i+1:], member) {
		return 0, 0, false
	}
	j = i + len(member)
	switch {
	case i > 0 && raw[i-1] == ',':
		i--
	case j < len(raw) && raw[j] == ',':
		j++
	}
	return i, j, true
}

func sum(key, input []byte) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write(input)
	return mac.Sum(nil)
}
