package passkey

import (
	"bytes"
	"crypto/sha256"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
)

func FuzzECDSADERToRaw(f *testing.F) {
	for _, s := range [][]byte{
		{0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01},
		{0x30, 0x08, 0x02, 0x02, 0x00, 0x80, 0x02, 0x02, 0x00, 0x80},
		{0x30, 0x07, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01, 0x00},
		{},
		bytes.Repeat([]byte{0x30}, 72),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, der []byte) {
		raw, err := ECDSADERToRaw(der)
		if err != nil {
			if problem.Code(err) != "passkey-bad-data" {
				t.Fatalf("code %q", problem.Code(err))
			}
			return
		}
		if len(raw) != 64 {
			t.Fatalf("raw of %d bytes", len(raw))
		}
		// What strict DER accepts it writes back the same way: r and s
		// re-encoded minimally give the input bytes.
		if !bytes.Equal(encodeDER(raw), der) {
			t.Fatalf("accepted a non-minimal encoding %x", der)
		}
	})
}

// encodeDER writes r‖s as the minimal DER SEQUENCE of two INTEGERs.
func encodeDER(raw []byte) []byte {
	integer := func(b []byte) []byte {
		for len(b) > 1 && b[0] == 0 {
			b = b[1:]
		}
		if b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return append([]byte{0x02, byte(len(b))}, b...)
	}
	body := append(integer(raw[:32]), integer(raw[32:])...)
	return append([]byte{0x30, byte(len(body))}, body...)
}

// FuzzClientData feeds arbitrary client data JSON (and authenticator data)
// through the assertion steps: never a panic, always a passkey code.
func FuzzClientData(f *testing.F) {
	rp := sha256.Sum256([]byte(testRPID))
	ad := append(rp[:], 0x05, 0, 0, 0, 1)
	f.Add([]byte(`{"type":"webauthn.get","challenge":"x","origin":"https://sign.example.org","crossOrigin":false}`), ad)
	f.Add([]byte(`{"type":"webauthn.get","challenge":"47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU","origin":"https://sign.example.org"}`), ad)
	f.Add([]byte(`{"type":1e400}`), []byte{})
	f.Add([]byte("\xef\xbb\xbf{}"), ad)
	f.Add([]byte(`[`), ad[:36])
	d, err := NewDevPasskey(testOrigin, testRPID)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, clientData, authData []byte) {
		if _, err := ParseClientData(clientData); err != nil && problem.Code(err) != "passkey-bad-data" {
			t.Fatalf("parse code %q", problem.Code(err))
		}
		st, err := CheckAssertion(d.Key(), testRPID, testOrigin, nil, Assertion{authData, clientData, []byte{0x30}}, nil)
		if err == nil || st != "" {
			t.Fatalf("an assertion with no valid signature passed: %v %v", st, err)
		}
		switch problem.Code(err) {
		case "passkey-bad-data", "passkey-wrong-type", "passkey-challenge-mismatch", "passkey-origin-mismatch",
			"passkey-rpid-mismatch", "passkey-user-not-present", "passkey-user-not-verified", "signature-invalid":
		default:
			t.Fatalf("code %q", problem.Code(err))
		}
	})
}

func FuzzCheckOrigin(f *testing.F) {
	f.Add("https://sign.example.org", "example.org")
	f.Add("http://localhost:8080", "localhost")
	f.Add("https://a.b:0", "b")
	f.Fuzz(func(t *testing.T, origin, rpID string) {
		if err := CheckOrigin(origin, rpID); err != nil && problem.Code(err) != "bad-field" {
			t.Fatalf("code %q", problem.Code(err))
		}
	})
}
