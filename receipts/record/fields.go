package record

import (
	"fmt"
	"slices"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
)

// Small checks on the members of a record's content (the reference's
// fields.js). Each gives "bad-field" and names the member and why.

func fail(path, format string, a ...any) error {
	return problem.New(CodeBadField, "%s: %s", path, fmt.Sprintf(format, a...))
}

// members confirms that v is an object holding every required member and
// nothing that is neither required nor optional.
func members(v any, required, optional []string, path string) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok || m == nil {
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

// text confirms a text of least to most characters (code points).
func text(v any, least, most int, path string) error {
	s, ok := v.(string)
	if !ok || len(s) > most*4 {
		return fail(path, "must be text of %d to %d characters", least, most)
	}
	if n := canon.Chars(s); n < least || n > most {
		return fail(path, "must be text of %d to %d characters", least, most)
	}
	return nil
}

// label is a name chosen by the writer: 1 to 200 characters.
func label(v any, path string) error { return text(v, 1, 200, path) }

// wholeNumber returns v as a whole number 0 … 2^53−1.
func wholeNumber(v any, path string) (int64, error) {
	if n, ok := WholeNumber(v); ok {
		return n, nil
	}
	return 0, fail(path, "must be a whole number, 0 or more")
}

// WholeNumber returns v as a whole number when it is one from 0 to 2^53−1
// (int64 as canon.Parse gives, or int, int32, uint32, uint64).
func WholeNumber(v any) (int64, bool) {
	var n int64
	switch x := v.(type) {
	case int64:
		n = x
	case int:
		n = int64(x)
	case int32:
		n = int64(x)
	case uint32:
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

func list(v any, least, most int, path string) ([]any, error) {
	l, ok := v.([]any)
	if !ok || len(l) < least || len(l) > most {
		return nil, fail(path, "must be a list of %d to %d items", least, most)
	}
	return l, nil
}

// IsShortName reports whether s is an action name or a service id in form:
// ^[a-z0-9][a-z0-9._-]{0,63}$ (read byte by byte: every stub names one,
// and a book is read line after line).
func IsShortName(s string) bool { return inForm(s, 64, false) }

// IsUnit reports whether s is a unit in form: ^[A-Za-z0-9][A-Za-z0-9._-]{0,15}$.
func IsUnit(s string) bool { return inForm(s, 16, true) }

// inForm reports whether s is 1 to most bytes of [a-z0-9] (with capitals
// A-Z too when capitals), ".", "_" and "-", the first not one of those three.
func inForm(s string, most int, capitals bool) bool {
	if len(s) == 0 || len(s) > most {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', capitals && c >= 'A' && c <= 'Z':
		case i > 0 && (c == '.' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// shortName is an action name or the id of a service.
func shortName(v any, path string) error {
	if s, ok := v.(string); !ok || !IsShortName(s) {
		return fail(path, "must be 1 to 64 lower-case letters, digits, full stops, hyphens or underscores")
	}
	return nil
}

// actionName is a short name; names beginning "provared." must be shared.
func actionName(v any, path string) error {
	if err := shortName(v, path); err != nil {
		return err
	}
	if s, _ := v.(string); IsUnknownReserved(s) { // shortName has checked that v is text
		return fail(path, `names that begin "provared." are reserved, and this one is not on the shared list`)
	}
	return nil
}

func unit(v any, path string) error {
	if s, ok := v.(string); !ok || !IsUnit(s) {
		return fail(path, "must be 1 to 16 letters, digits, full stops, hyphens or underscores, with no spaces")
	}
	return nil
}

func base64urlOfLength(v any, n int, path, what string) error {
	s, ok := v.(string)
	if !ok {
		return fail(path, "must be %s", what)
	}
	b, err := canon.UnB64(s)
	if err != nil || len(b) != n {
		return fail(path, "must be %s", what)
	}
	return nil
}

// id is a unique number: 16 bytes in base64url.
func id(v any, path string) error {
	return base64urlOfLength(v, 16, path, "a unique number of 16 bytes in base64url")
}

// fingerprint is SHA-256 in base64url.
func fingerprint(v any, path string) error {
	return base64urlOfLength(v, 32, path, "a SHA-256 fingerprint in base64url")
}

// timeText is a time written YYYY-MM-DDTHH:MM:SSZ.
func timeText(v any, path string) error {
	if s, ok := v.(string); ok {
		if _, ok := canon.ParseTime(s); ok {
			return nil
		}
	}
	return fail(path, "must be a time written as YYYY-MM-DDTHH:MM:SSZ")
}

func has(m map[string]any, name string) bool { _, ok := m[name]; return ok }
