package wire

import (
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"strconv"
	"unicode/utf8"
)

// MaxLogText is the most bytes of a text the client or the server chose
// (a method name, a member path, a reason) that goes into a log or an
// error message.
const MaxLogText = 256

// Cut returns s when it is at most MaxLogText bytes; otherwise its first
// bytes, ending on a whole UTF-8 character, followed by a mark that says
// it was cut and how long it was: "…(cut, 8388608 bytes)". Bytes of s that
// are not UTF-8 are written as U+FFFD, so the result is always valid UTF-8.
func Cut(s string) string {
	if len(s) <= MaxLogText && utf8.ValidString(s) {
		return s
	}
	out := make([]byte, 0, MaxLogText+32)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			n = 0 // written as U+FFFD below
		}
		w := n
		if n == 0 {
			w = utf8.RuneLen(utf8.RuneError)
		}
		if len(out)+w > MaxLogText {
			break
		}
		if n == 0 {
			out = utf8.AppendRune(out, utf8.RuneError)
			i++
		} else {
			out = append(out, s[i:i+n]...)
			i += n
		}
	}
	if len(s) <= MaxLogText {
		return string(out) // only not UTF-8: nothing was cut
	}
	out = append(out, "…(cut, "...)
	out = strconv.AppendInt(out, int64(len(s)), 10)
	return string(append(out, " bytes)"...))
}

// LineAttr is how a line that is dropped is logged: its size and SHA-256
// (hex), never its bytes.
func LineAttr(line []byte) slog.Attr {
	sum := sha256.Sum256(line)
	return slog.Group("line", slog.Int("bytes", len(line)), slog.String("sha256", hex.EncodeToString(sum[:])))
}
