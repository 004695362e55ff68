package canon

import (
	"crypto/rand"
	"time"
	"unicode/utf8"
)

const timeLayout = "2006-01-02T15:04:05Z"

// ParseTime reads exactly YYYY-MM-DDTHH:MM:SSZ in ASCII digits naming a
// real instant (years 0000 … 9999, no 24:00, no leap second, no fraction or
// offset).
func ParseTime(s string) (time.Time, bool) {
	if len(s) != 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != 'Z' {
		return time.Time{}, false
	}
	num := func(i, n int) (int, bool) {
		v := 0
		for _, c := range []byte(s[i : i+n]) {
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		return v, true
	}
	year, ok1 := num(0, 4)
	month, ok2 := num(5, 2)
	day, ok3 := num(8, 2)
	hour, ok4 := num(11, 2)
	minute, ok5 := num(14, 2)
	sec, ok6 := num(17, 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) {
		return time.Time{}, false
	}
	if month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, 0, time.UTC)
	if t.Day() != day || t.Month() != time.Month(month) {
		return time.Time{}, false // e.g. 29 February in a common year
	}
	return t, true
}

// FormatTime writes t in UTC to the second as YYYY-MM-DDTHH:MM:SSZ.
func FormatTime(t time.Time) string { return t.UTC().Truncate(time.Second).Format(timeLayout) }

// NewID returns 16 random bytes as base64url (22 characters).
func NewID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("canon.NewID: reading random bytes: " + err.Error()) // crypto/rand never fails on supported systems
	}
	return B64(b[:])
}

// IsID reports whether s is strict base64url of exactly 16 bytes.
func IsID(s string) bool {
	if len(s) != 22 {
		return false
	}
	b, err := UnB64(s)
	return err == nil && len(b) == 16
}

// Chars counts the Unicode code points of s (each invalid byte counts one).
func Chars(s string) int { return utf8.RuneCountInString(s) }
