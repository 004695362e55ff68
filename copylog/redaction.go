package copylog

import (
	"fmt"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
)

// KindRedactionSalt holds the salt the executor's redaction tags are made
// with (member salt: base64url, no padding, of 32 bytes). An auditor who
// holds an original value shows with it that a [REDACTED:kind:tag] token
// stood for that value. The executor writes one when it first needs a salt
// and reads the latest one at every start.
const KindRedactionSalt Kind = "redaction-salt"

// saltBytes is the size of a redaction salt.
const saltBytes = 32

func init() {
	kindMembers[KindRedactionSalt] = []member{{"salt", false}}
}

// LatestSalt returns the salt of the last redaction-salt line of lines, nil
// when there is none.
func LatestSalt(lines []Line) []byte {
	for i := len(lines) - 1; i >= 0; i-- {
		if lines[i].Kind == KindRedactionSalt {
			if b, err := canon.UnB64(lines[i].Salt); err == nil {
				return b
			}
		}
	}
	return nil
}

// SaltText is how a salt is written on a redaction-salt line.
func SaltText(salt []byte) string { return canon.B64(salt) }

func checkSalt(s string) error {
	b, err := canon.UnB64(s)
	if err != nil || len(b) != saltBytes {
		return fmt.Errorf("salt is not base64url of %d bytes", saltBytes)
	}
	return nil
}
