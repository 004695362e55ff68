package passkey

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

const (
	testOrigin = "https://sign.example.org"
	testRPID   = "example.org"
)

// softPasskey answers challenges with any signing function, so that RS256
// and Ed25519 passkeys can be tested beside the ES256 development passkey.
type softPasskey struct {
	key   *jwk.Key
	flags byte
	sign  func(msg []byte) []byte
}

func (p softPasskey) assert(t *testing.T, challenge []byte, clientData string) Assertion {
	t.Helper()
	if clientData == "" {
		clientData = `{"type":"webauthn.get","challenge":"` + canon.B64(challenge) + `","origin":"` + testOrigin + `","crossOrigin":false}`
	}
	rp := sha256.Sum256([]byte(testRPID))
	ad := append(rp[:], p.flags, 0, 0, 0, 1)
	ch := sha256.Sum256([]byte(clientData))
	return Assertion{AuthenticatorData: ad, ClientDataJSON: []byte(clientData), Signature: p.sign(append(append([]byte{}, ad...), ch[:]...))}
}

// signedSlipRecord signs a minimal slip envelope with p (content is not a
// valid slip; Verify checks only the passkey signature).
func signedSlipRecord(t *testing.T, p softPasskey, clientData string) *record.Record {
	t.Helper()
	payload := canon.B64(canon.MustMarshal(map[string]any{"type": "provared.slip.v0"}))
	protected, _ := ProtectedHeader(record.Slip)
	challenge := sha256.Sum256([]byte(protected + "." + payload))
	r, err := record.Parse(Envelope(payload, protected, p.assert(t, challenge[:], clientData)), record.Slip)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func rsaPasskey(t *testing.T) softPasskey {
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	key, err := jwk.CheckKey(map[string]any{"alg": "RS256", "e": "AQAB", "kty": "RSA", "n": canon.B64(priv.N.Bytes())}, "RS256")
	if err != nil {
		t.Fatal(err)
	}
	return softPasskey{key: key, flags: 0x05, sign: func(msg []byte) []byte {
		h := sha256.Sum256(msg)
		s, err := rsa.SignPKCS1v15(rand.Reader, priv, crypto.SHA256, h[:])
		if err != nil {
			t.Fatal(err)
		}
		return s
	}}
}

func ed25519Passkey(t *testing.T) softPasskey {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	key, err := jwk.NewEd25519Key(pub)
	if err != nil {
		t.Fatal(err)
	}
	return softPasskey{key: key, flags: 0x05, sign: func(msg []byte) []byte { return ed25519.Sign(priv, msg) }}
}

func devSoft(t *testing.T) softPasskey {
	d, err := NewDevPasskey(testOrigin, testRPID)
	if err != nil {
		t.Fatal(err)
	}
	return softPasskey{key: d.Key(), flags: 0x05, sign: func(msg []byte) []byte {
		// The development passkey's key, signing as Assert does (DER).
		h := sha256.Sum256(msg)
		sig, err := d.priv.Sign(rand.Reader, h[:], crypto.SHA256)
		if err != nil {
			t.Fatal(err)
		}
		return sig
	}}
}

func TestVerifyEveryMethod(t *testing.T) {
	for name, p := range map[string]softPasskey{"ES256": devSoft(t), "RS256": rsaPasskey(t), "Ed25519": ed25519Passkey(t)} {
		t.Run(name, func(t *testing.T) {
			r := signedSlipRecord(t, p, "")
			if err := Verify(p.key, testOrigin, testRPID, r); err != nil {
				t.Fatalf("valid %s assertion refused: %v", name, err)
			}
			if st, err := Check(p.key, testOrigin, testRPID, r, []string{name}); err != nil || st != Unavailable {
				t.Errorf("without %s: %v %v", name, st, err)
			}
			tests := []struct {
				name, origin, rpID string
				mut                func(*softPasskey)
				clientData         string
				want               string
			}{
				{name: "wrong origin", origin: "https://other.example.org", rpID: testRPID, want: "passkey-origin-mismatch"},
				{name: "wrong rpId", origin: testOrigin, rpID: "sign.example.org", want: "passkey-rpid-mismatch"},
				{name: "no UP", origin: testOrigin, rpID: testRPID, mut: func(p *softPasskey) { p.flags = 0x04 }, want: "passkey-user-not-present"},
				{name: "no UV", origin: testOrigin, rpID: testRPID, mut: func(p *softPasskey) { p.flags = 0x01 }, want: "passkey-user-not-verified"},
				{name: "AT", origin: testOrigin, rpID: testRPID, mut: func(p *softPasskey) { p.flags = 0x45 }, want: "passkey-bad-data"},
				{name: "create", origin: testOrigin, rpID: testRPID, clientData: `{"type":"webauthn.create"}`, want: "passkey-wrong-type"},
				{name: "challenge", origin: testOrigin, rpID: testRPID, clientData: `{"type":"webauthn.get","challenge":"AAAA"}`, want: "passkey-challenge-mismatch"},
				{name: "list", origin: testOrigin, rpID: testRPID, clientData: `[]`, want: "passkey-bad-data"},
				{name: "trailing", origin: testOrigin, rpID: testRPID, clientData: `{} {}`, want: "passkey-bad-data"},
				{name: "wrong key", origin: testOrigin, rpID: testRPID, mut: func(q *softPasskey) {
					// Another key of the same method.
					others := map[string]func(*testing.T) softPasskey{"ES256": devSoft, "RS256": rsaPasskey, "Ed25519": ed25519Passkey}
					q.sign = others[name](t).sign
				}, want: "signature-invalid"},
			}
			for _, tt := range tests {
				q := p
				if tt.mut != nil {
					tt.mut(&q)
				}
				r := signedSlipRecord(t, q, tt.clientData)
				if got := problem.Code(Verify(p.key, tt.origin, tt.rpID, r)); got != tt.want {
					t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
				}
			}
		})
	}
}

func TestCrossOriginRefused(t *testing.T) {
	p := ed25519Passkey(t)
	payload := canon.B64(canon.MustMarshal(map[string]any{"type": "provared.slip.v0"}))
	protected, _ := ProtectedHeader(record.Slip)
	challenge := sha256.Sum256([]byte(protected + "." + payload))
	cd := `{"type":"webauthn.get","challenge":"` + canon.B64(challenge[:]) + `","origin":"` + testOrigin + `","crossOrigin":true}`
	r := signedSlipRecord(t, p, cd)
	if got := problem.Code(Verify(p.key, testOrigin, testRPID, r)); got != "passkey-origin-mismatch" {
		t.Errorf("crossOrigin true: %q", got)
	}
}

func TestProtectedHeadersMatchRecord(t *testing.T) {
	for _, k := range []record.Kind{record.Slip, record.Approval, record.Cancellation} {
		mine, _ := ProtectedHeader(k)
		if hs := k.ProtectedHeaders(); len(hs) != 1 || hs[0] != mine {
			t.Errorf("%s: %q vs record's %q", k, mine, hs)
		}
	}
}

func TestDevPasskey(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "passkey.jwk")
	d, err := LoadOrCreateDevPasskey(path, testOrigin, testRPID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.Note(), "development passkey") || !strings.Contains(d.Note(), "prove nothing") {
		t.Errorf("note: %q", d.Note())
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", fi.Mode().Perm())
	}
	text, _ := os.ReadFile(path)
	var f map[string]any
	if err := json.Unmarshal(text, &f); err != nil || f["d"] == nil || f["kty"] != "EC" {
		t.Errorf("key file is not a jwk with d: %s", text)
	}
	again, err := LoadOrCreateDevPasskey(path, testOrigin, testRPID)
	if err != nil {
		t.Fatal(err)
	}
	if again.Key().Thumbprint != d.Key().Thumbprint {
		t.Errorf("loaded key differs from the saved one")
	}
	if err := d.Save(path); err == nil {
		t.Errorf("Save overwrote an existing file")
	}

	content := map[string]any{"type": "provared.cancellation.v0", "id": canon.NewID(), "slip": canon.Fingerprint(nil), "when": "2026-10-05T09:00:00Z"}
	r, err := again.SignRecord(record.Cancellation, content)
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(d.Key(), testOrigin, testRPID, r); err != nil {
		t.Errorf("a record the development passkey signed is refused: %v", err)
	}
	cd, _ := canon.UnB64(r.Signatures[0].Header.ClientDataJSON)
	if !strings.HasPrefix(string(cd), `{"type":"webauthn.get","challenge":"`) || !strings.HasSuffix(string(cd), `","origin":"https://sign.example.org","crossOrigin":false}`) {
		t.Errorf("client data not as a browser writes it: %s", cd)
	}
	ad, _ := canon.UnB64(r.Signatures[0].Header.AuthenticatorData)
	if len(ad) != 37 || ad[32] != 0x05 {
		t.Errorf("authenticator data: %x", ad)
	}
	if _, err := d.SignRecord(record.Stub, content); err == nil {
		t.Errorf("a stub was signed with a passkey")
	}

	if err := os.WriteFile(filepath.Join(dir, "bad.jwk"), []byte(`{"kty":"OKP"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateDevPasskey(filepath.Join(dir, "bad.jwk"), testOrigin, testRPID); err == nil {
		t.Errorf("a key file of another kind was read")
	}
	if _, err := NewDevPasskey("http://sign.example.org", testRPID); err == nil {
		t.Errorf("a development passkey on a plain-http origin was made")
	}
}
