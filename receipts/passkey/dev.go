package passkey

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// DevNote is what a development passkey says of itself wherever it is shown.
const DevNote = "development passkey: records signed with it prove nothing about any person"

// The protected headers of the three passkey-signed kinds (format
// description, section 1), as the exact bytes a writer must emit, in
// base64url.
var passkeyHeaders = map[record.Kind]string{
	"slip":         "eyJ0eXAiOiJ2bmQucHJvdmFyZWQuc2xpcC52MCtqc29uIiwiYWxnIjoicHJvdmEucmVkL3dlYmF1dGhuL3YwIn0",
	"approval":     "eyJ0eXAiOiJ2bmQucHJvdmFyZWQuYXBwcm92YWwudjAranNvbiIsImFsZyI6InByb3ZhLnJlZC93ZWJhdXRobi92MCJ9",
	"cancellation": "eyJ0eXAiOiJ2bmQucHJvdmFyZWQuY2FuY2VsbGF0aW9uLnYwK2pzb24iLCJhbGciOiJwcm92YS5yZWQvd2ViYXV0aG4vdjAifQ",
}

// ProtectedHeader returns the base64url protected header of a
// passkey-signed kind (slip, approval or cancellation).
func ProtectedHeader(kind record.Kind) (string, bool) {
	h, ok := passkeyHeaders[kind]
	return h, ok
}

// DevPasskey is a software ES256 authenticator FOR TESTS AND THE DEMO ONLY.
// It signs slips, approvals and cancellations exactly as a browser passkey
// would (client data {type:"webauthn.get", challenge, origin,
// crossOrigin:false}; authenticator data SHA-256(rpId) ‖ flags UP|UV ‖
// counter), so the checkers accept what it signs. Its private key lives in
// this process or in a plain file: a record signed with it proves nothing
// about any person, and no real slip should ever name its key.
type DevPasskey struct {
	origin, rpID string
	priv         *ecdsa.PrivateKey
	key          *jwk.Key

	mu      sync.Mutex
	counter uint32
}

// NewDevPasskey makes a development passkey with a fresh key, for the page
// origin and website rpID it will claim to be used on.
func NewDevPasskey(origin, rpID string) (*DevPasskey, error) {
	if err := CheckOrigin(origin, rpID); err != nil {
		return nil, fmt.Errorf("development passkey: %w", err)
	}
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("development passkey: making a key: %w", err)
	}
	return newDev(origin, rpID, priv)
}

// devKeyFile is the file form of a development passkey's key: a P-256 JWK
// with its private part "d".
type devKeyFile struct {
	Crv  string `json:"crv"`
	D    string `json:"d"`
	Kty  string `json:"kty"`
	X    string `json:"x"`
	Y    string `json:"y"`
	Note string `json:"note,omitempty"`
}

// LoadOrCreateDevPasskey reads a development passkey's key from path (a
// P-256 JWK with "d"), or, when the file does not exist, makes a fresh key
// and writes it there with mode 0600.
func LoadOrCreateDevPasskey(path, origin, rpID string) (*DevPasskey, error) {
	if err := CheckOrigin(origin, rpID); err != nil {
		return nil, fmt.Errorf("development passkey: %w", err)
	}
	text, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		d, err := NewDevPasskey(origin, rpID)
		if err != nil {
			return nil, err
		}
		if err := d.Save(path); err != nil {
			return nil, err
		}
		return d, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading development passkey %s: %w", path, err)
	}
	var f devKeyFile
	if err := json.Unmarshal(text, &f); err != nil {
		return nil, fmt.Errorf("reading development passkey %s: not a jwk: %w", path, err)
	}
	if f.Kty != "EC" || f.Crv != "P-256" {
		return nil, fmt.Errorf("reading development passkey %s: not a p-256 key", path)
	}
	dBytes, err := canon.UnB64(f.D)
	if err != nil {
		return nil, fmt.Errorf("reading development passkey %s: private part: %w", path, err)
	}
	priv, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), dBytes)
	if err != nil {
		return nil, fmt.Errorf("reading development passkey %s: private part: %w", path, err)
	}
	d, err := newDev(origin, rpID, priv)
	if err != nil {
		return nil, err
	}
	if x, y := d.key.JWK["x"], d.key.JWK["y"]; x != f.X || y != f.Y {
		return nil, fmt.Errorf("reading development passkey %s: public part does not match the private part", path)
	}
	return d, nil
}

// Save writes the key (with its private part) to path, mode 0600, refusing
// to overwrite a file that exists.
func (d *DevPasskey) Save(path string) error {
	dBytes, err := d.priv.Bytes()
	if err != nil {
		return fmt.Errorf("writing development passkey %s: %w", path, err)
	}
	x, xOK := d.key.JWK["x"].(string)
	y, yOK := d.key.JWK["y"].(string)
	if !xOK || !yOK {
		return fmt.Errorf("writing development passkey %s: its public key has no x and y coordinates", path)
	}
	text, err := json.Marshal(devKeyFile{
		Crv: "P-256", D: canon.B64(dBytes), Kty: "EC",
		X: x, Y: y, Note: DevNote,
	})
	if err != nil {
		return fmt.Errorf("writing development passkey %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("writing development passkey %s: %w", path, err)
	}
	if _, err := f.Write(append(text, '\n')); err != nil {
		_ = f.Close() // the write's error is the one to report
		return fmt.Errorf("writing development passkey %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close() // the sync's error is the one to report
		return fmt.Errorf("writing development passkey %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing development passkey %s: %w", path, err)
	}
	return nil
}

func newDev(origin, rpID string, priv *ecdsa.PrivateKey) (*DevPasskey, error) {
	pub, err := priv.PublicKey.Bytes() // 0x04 ‖ x ‖ y
	if err != nil {
		return nil, fmt.Errorf("development passkey: public key: %w", err)
	}
	if len(pub) != 65 {
		return nil, fmt.Errorf("development passkey: public key of %d bytes, want 65 (an uncompressed P-256 point)", len(pub))
	}
	key, err := jwk.CheckKey(map[string]any{
		"alg": "ES256", "crv": "P-256", "kty": "EC",
		"x": canon.B64(pub[1:33]), "y": canon.B64(pub[33:]),
	}, "ES256")
	if err != nil {
		return nil, fmt.Errorf("development passkey: public key: %w", err)
	}
	return &DevPasskey{origin: origin, rpID: rpID, priv: priv, key: key}, nil
}

// Note says what this passkey is: for tests and the demo only.
func (d *DevPasskey) Note() string { return DevNote }

// Key is the passkey's public key, as a slip's issuer.key names it.
func (d *DevPasskey) Key() *jwk.Key { return d.key }

// Origin and RPID are the page and website the passkey claims to be used on.
func (d *DevPasskey) Origin() string { return d.origin }

// RPID is the website the passkey belongs to.
func (d *DevPasskey) RPID() string { return d.rpID }

// Issuer is the "issuer" member of a slip signed with this passkey, with the
// given name.
func (d *DevPasskey) Issuer(name string) map[string]any {
	return map[string]any{"key": d.key.JWK, "name": name, "origin": d.origin, "rpId": d.rpID}
}

// Assert answers one challenge as a browser passkey would, with user
// presence and user verification.
func (d *DevPasskey) Assert(challenge []byte) (Assertion, error) {
	d.mu.Lock()
	d.counter++
	counter := d.counter
	d.mu.Unlock()

	client, err := json.Marshal(struct {
		Type        string `json:"type"`
		Challenge   string `json:"challenge"`
		Origin      string `json:"origin"`
		CrossOrigin bool   `json:"crossOrigin"`
	}{"webauthn.get", canon.B64(challenge), d.origin, false})
	if err != nil {
		return Assertion{}, fmt.Errorf("development passkey: client data: %w", err)
	}
	rpHash := sha256.Sum256([]byte(d.rpID))
	ad := make([]byte, 37)
	copy(ad, rpHash[:])
	ad[32] = flagUserPresent | flagUserVerified
	binary.BigEndian.PutUint32(ad[33:], counter)

	clientHash := sha256.Sum256(client)
	signed := sha256.Sum256(append(append([]byte{}, ad...), clientHash[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, d.priv, signed[:])
	if err != nil {
		return Assertion{}, fmt.Errorf("development passkey: signing: %w", err)
	}
	return Assertion{AuthenticatorData: ad, ClientDataJSON: client, Signature: sig}, nil
}

// SignRecord signs content as a record of a passkey-signed kind (slip,
// approval or cancellation) and returns it parsed. The content must already
// be valid for its kind; the caller checks that.
func (d *DevPasskey) SignRecord(kind record.Kind, content map[string]any) (*record.Record, error) {
	protected, ok := passkeyHeaders[kind]
	if !ok {
		return nil, fmt.Errorf("development passkey: %q is not signed with a passkey", kind)
	}
	text, err := canon.Marshal(content)
	if err != nil {
		return nil, fmt.Errorf("development passkey: content of %s: %w", kind, err)
	}
	payload := canon.B64(text)
	challenge := sha256.Sum256([]byte(protected + "." + payload))
	a, err := d.Assert(challenge[:])
	if err != nil {
		return nil, err
	}
	r, err := record.Parse(Envelope(payload, protected, a), kind)
	if err != nil {
		return nil, fmt.Errorf("development passkey: the signed %s does not read back: %w", kind, err)
	}
	return r, nil
}

// Envelope puts a passkey's three values with a payload and protected
// header (both base64url): the signed record as a canonical value, the
// values stored exactly as the passkey returned them.
func Envelope(payload, protected string, a Assertion) map[string]any {
	return map[string]any{
		"payload": payload,
		"signatures": []any{map[string]any{
			"header": map[string]any{
				"authenticatorData": canon.B64(a.AuthenticatorData),
				"clientDataJSON":    canon.B64(a.ClientDataJSON),
			},
			"protected": protected,
			"signature": canon.B64(a.Signature),
		}},
	}
}
