package passkey

import "github.com/seed-6e06167c/mcp-executor/receipts/problem"

// ECDSADERToRaw converts a passkey's ES256 signature from its DER form,
// SEQUENCE { INTEGER r, INTEGER s }, to the 64 bytes r‖s that ECDSA
// verification takes (Web Authentication, section 6.5.5). Only strict DER is
// accepted: a short-form length, total length 8 to 72, each INTEGER 1 to 33
// bytes, positive, in its shortest form and of at most 32 significant bytes,
// and nothing left over. Any fault is a *problem.Error with code
// "passkey-bad-data".
func ECDSADERToRaw(der []byte) ([]byte, error) {
	if len(der) < 8 || len(der) > 72 || der[0] != 0x30 || int(der[1]) != len(der)-2 {
		return nil, badData("the passkey signature is not a well-formed ecdsa signature")
	}
	out := make([]byte, 64)
	at := 2
	for part := 0; part < 2; part++ {
		if at+2 > len(der) || der[at] != 0x02 {
			return nil, badData("the passkey signature is not a well-formed ecdsa signature")
		}
		length := int(der[at+1])
		start := at + 2
		end := start + length
		if length < 1 || length > 33 || end > len(der) {
			return nil, badData("the passkey signature is not a well-formed ecdsa signature")
		}
		if der[start]&0x80 != 0 {
			return nil, badData("the passkey signature holds a negative number")
		}
		if length > 1 && der[start] == 0x00 && der[start+1]&0x80 == 0 {
			return nil, badData("the passkey signature is not in its shortest form")
		}
		digits := der[start:end]
		if digits[0] == 0x00 {
			digits = digits[1:]
		}
		if len(digits) > 32 {
			return nil, badData("the passkey signature holds a number that is too large")
		}
		copy(out[part*32+32-len(digits):], digits)
		at = end
	}
	if at != len(der) {
		return nil, badData("the passkey signature has bytes left over")
	}
	return out, nil
}

func badData(msg string) *problem.Error { return problem.New("passkey-bad-data", "%s", msg) }
