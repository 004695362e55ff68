package canon

import (
	"crypto/sha256"
	"encoding/base64"
	"strings"

	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
)

// B64 writes b as base64url without padding.
func B64(b []byte) string {
	var sb strings.Builder
	sb.Grow(B64Len(len(b)))
	WriteB64(&sb, b)
	return sb.String()
}

// B64Len is the length of B64 of n bytes.
func B64Len(n int) int { return base64.RawURLEncoding.EncodedLen(n) }

// b64Chunk is how many bytes WriteB64 encodes at a time: a multiple of 3,
// so that the texts of the chunks, one after the other, are the text of
// the whole.
const b64Chunk = 768

// WriteB64 writes b as base64url without padding (the text B64 gives) to
// sb, through a buffer on the stack: the text is copied once, into sb.
func WriteB64(sb *strings.Builder, b []byte) {
	var tmp [b64Chunk / 3 * 4]byte
	for len(b) > 0 {
		n := min(len(b), b64Chunk)
		m := base64.RawURLEncoding.EncodedLen(n)
		base64.RawURLEncoding.Encode(tmp[:m], b[:n])
		sb.Write(tmp[:m])
		b = b[n:]
	}
}

var strictB64 = base64.RawURLEncoding.Strict()

// UnB64 reads base64url strictly: only A–Z a–z 0–9 - _, no padding, no
// whitespace, no length of 1 mod 4, and unused trailing bits must be zero
// (so each byte string has exactly one spelling). Faults have code
// "bad-base64url".
//
// The strict decoder of encoding/base64 (RawURLEncoding) refuses every
// byte outside the alphabet, "=" included, and trailing bits that are not
// zero; it only passes over '\r' and '\n', which are looked for first
// (IndexByte, many bytes at a time). Only a text that fails is read again
// character by character, to name its fault.
func UnB64(s string) ([]byte, error) {
	if len(s)%4 != 1 && strings.IndexByte(s, '\n') < 0 && strings.IndexByte(s, '\r') < 0 {
		if b, err := strictB64.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, unB64Fault(s)
}

// unB64Fault names what is wrong with a text UnB64 refuses.
func unB64Fault(s string) error {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return problem.New(CodeBadBase64url, "a character outside the base64url alphabet at position %d", i)
		}
	}
	if len(s)%4 == 1 {
		return problem.New(CodeBadBase64url, "a base64url text cannot be %d characters long", len(s))
	}
	if _, err := strictB64.DecodeString(s); err != nil {
		return problem.New(CodeBadBase64url, "not strict base64url: %v", err)
	}
	// Not reached: UnB64 calls this only for a text the decoder refused.
	return problem.New(CodeBadBase64url, "not strict base64url")
}

// Fingerprint is B64(SHA-256(b)), 43 characters.
func Fingerprint(b []byte) string {
	sum := sha256.Sum256(b)
	return B64(sum[:])
}

// IsFingerprint reports whether s is 43 characters of strict base64url
// holding 32 bytes.
func IsFingerprint(s string) bool {
	if len(s) != 43 {
		return false
	}
	b, err := UnB64(s)
	return err == nil && len(b) == 32
}
