package slip

import (
	"fmt"
	"slices"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
)

// The field checks below mirror the reference's fields.js. Each fails with
// a *problem.Error of code "bad-field" naming the field's path. Values are
// canonical values (map[string]any, []any, string, int64); anything else,
// such as a bool, nil or a float, is simply of the wrong type.

func fail(path, format string, a ...any) *problem.Error {
	return problem.New("bad-field", "%s: %s", path, fmt.Sprintf(format, a...))
}

// members: v must be an object holding every required member and no member
// that is neither required nor optional.
func members(v any, required, optional []string, path string) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fail(path, "must be an object")
	}
	for _, name := range required {
		if _, ok := m[name]; !ok {
			return nil, fail(path, "%q is missing", name)
		}
	}
	for name := range m {
		if !slices.Contains(required, name) && !slices.Contains(optional, name) {
			return nil, fail(path, "holds a member that is not known")
		}
	}
	return m, nil
}

func text(v any, lo, hi int, path string) (string, error) {
	s, ok := v.(string)
	if ok {
		if n := canon.Chars(s); n >= lo && n <= hi {
			return s, nil
		}
	}
	return "", fail(path, "must be text of %d to %d characters", lo, hi)
}

// asWhole reports v as a whole number from 0 to 2^53-1, whatever Go integer
// type holds it.
func asWhole(v any) (int64, bool) {
	var n int64
	switch x := v.(type) {
	case int64:
		n = x
	case int:
		n = int64(x)
	case int32:
		n = int64(x)
	case uint64:
		if x > canon.MaxSafeInt {
			return 0, false
		}
		n = int64(x)
	default:
		return 0, false
	}
	if n < 0 || n > canon.MaxSafeInt {
		return 0, false
	}
	return n, true
}

func wholeNumber(v any, path string) (int64, error) {
	n, ok := asWhole(v)
	if !ok {
		return 0, fail(path, "must be a whole number, 0 or more")
	}
	return n, nil
}

func list(v any, lo, hi int, path string) ([]any, error) {
	l, ok := v.([]any)
	if !ok || len(l) < lo || len(l) > hi {
		return nil, fail(path, "must be a list of %d to %d items", lo, hi)
	}
	return l, nil
}

// isShortName: ^[a-z0-9][a-z0-9._-]{0,63}$
func isShortName(s string) bool {
	if len(s) < 1 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') {
			continue
		}
		if i > 0 && (c == '.' || c == '_' || c == '-') {
			continue
		}
		return false
	}
	return true
}

// isUnit: ^[A-Za-z0-9][A-Za-z0-9._-]{0,15}$
func isUnit(s string) bool {
	if len(s) < 1 || len(s) > 16 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') {
			continue
		}
		if i > 0 && (c == '.' || c == '_' || c == '-') {
			continue
		}
		return false
	}
	return true
}

// shortName: an action name or the id of a service.
func shortName(v any, path string) (string, error) {
	s, ok := v.(string)
	if !ok || !isShortName(s) {
		return "", fail(path, "must be 1 to 64 lower-case letters, digits, full stops, hyphens or underscores")
	}
	return s, nil
}

// actionName: a short name; names that begin "provared." must be on the
// shared list.
func actionName(v any, path string) (string, error) {
	s, err := shortName(v, path)
	if err != nil {
		return "", err
	}
	if IsUnknownReserved(s) {
		return "", fail(path, `names that begin "provared." are reserved, and this one is not on the shared list`)
	}
	return s, nil
}

func unit(v any, path string) (string, error) {
	s, ok := v.(string)
	if !ok || !isUnit(s) {
		return "", fail(path, "must be 1 to 16 letters, digits, full stops, hyphens or underscores, with no spaces")
	}
	return s, nil
}

// label: a name chosen by the writer, 1 to 200 characters.
func label(v any, path string) (string, error) { return text(v, 1, 200, path) }

func idField(v any, path string) (string, error) {
	s, ok := v.(string)
	if !ok || !canon.IsID(s) {
		return "", fail(path, "must be a unique number of 16 bytes in base64url")
	}
	return s, nil
}

func fingerprintText(v any, path string) (string, error) {
	s, ok := v.(string)
	if !ok || !canon.IsFingerprint(s) {
		return "", fail(path, "must be a sha-256 fingerprint in base64url")
	}
	return s, nil
}

func timeField(v any, path string) (time.Time, error) {
	if s, ok := v.(string); ok {
		if t, ok := canon.ParseTime(s); ok {
			return t, nil
		}
	}
	return time.Time{}, fail(path, "must be a time written as YYYY-MM-DDTHH:MM:SSZ")
}
