package page

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/passkey"
	"github.com/seed-6e06167c/mcp-executor/sidecar/approval"
)

// The COSE algorithm numbers a page asks a passkey for (RFC 9053, RFC 8812).
const (
	coseES256 = -7
	coseEdDSA = -8
	coseRS256 = -257
)

// Registered is the page's passkey, as registration found it: not a secret
// (public key and credential id). Its thumbprint goes into the settings'
// agent.issuerKeys.
type Registered struct {
	CredentialID string         `json:"credentialId"` // base64url
	Alg          string         `json:"alg"`          // ES256, RS256 or Ed25519
	Key          map[string]any `json:"key"`          // the JWK as a slip's issuer.key holds it
	Thumbprint   string         `json:"thumbprint"`   // RFC 7638, SHA-256, base64url
	Origin       string         `json:"origin"`
	RPID         string         `json:"rpId"`
	RegisteredAt string         `json:"registeredAt"`
}

// JWK is the registered key, checked again.
func (r Registered) JWK() (*jwk.Key, error) {
	return jwk.CheckKey(r.Key, jwk.PasskeyAlgs...)
}

// Registration is what the page sends back from navigator.credentials.create:
// the client data, the authenticator data and the public key as
// SubjectPublicKeyInfo (AuthenticatorAttestationResponse.getPublicKey), each
// base64url, and the COSE algorithm number.
type Registration struct {
	CredentialID      string `json:"credentialId"`
	ClientDataJSON    string `json:"clientDataJSON"`
	AuthenticatorData string `json:"authenticatorData"`
	PublicKey         string `json:"publicKey"`
	Algorithm         int    `json:"publicKeyAlgorithm"`
}

// checkRegistration runs the steps of Web Authentication Level 3, section
// 7.1, that need no attestation: the client data says webauthn.create, the
// challenge the page gave, the page's origin, not cross-origin; the
// authenticator data is for the rpId, with the person present and verified
// and a credential attested; the key is one of the three the format takes.
// The key is read from getPublicKey's SubjectPublicKeyInfo and compared
// with nothing in the attested COSE key (no CBOR reader here): the page
// shows the thumbprint for the person to confirm and to put in the
// settings, and every later signature is checked against it.
func checkRegistration(g Registration, challenge []byte, origin, rpID string, now time.Time) (Registered, error) {
	cd, err1 := canon.UnB64(g.ClientDataJSON)
	ad, err2 := canon.UnB64(g.AuthenticatorData)
	spki, err3 := canon.UnB64(g.PublicKey)
	id, err4 := canon.UnB64(g.CredentialID)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || len(id) == 0 {
		return Registered{}, errors.New("a registration value is not base64url")
	}
	client, err := passkey.ParseClientData(cd)
	if err != nil {
		return Registered{}, err
	}
	if t, _ := client["type"].(string); t != "webauthn.create" {
		return Registered{}, errors.New("the client data is not of a passkey being created")
	}
	if c, _ := client["challenge"].(string); c != canon.B64(challenge) {
		return Registered{}, errors.New("the passkey answered another challenge")
	}
	if o, _ := client["origin"].(string); o != origin {
		return Registered{}, fmt.Errorf("the passkey was created on the page %q, and this page is %s", o, origin)
	}
	if cross, _ := client["crossOrigin"].(bool); cross {
		return Registered{}, fmt.Errorf("the passkey was created inside a frame of another page than %s", origin)
	}
	if len(ad) < 37 {
		return Registered{}, errors.New("the authenticator data is cut short")
	}
	rpHash := sha256.Sum256([]byte(rpID))
	if !bytes.Equal(ad[:32], rpHash[:]) {
		return Registered{}, fmt.Errorf("the passkey was created for another rpId than this page's (%s)", rpID)
	}
	const up, uv, at = 0x01, 0x04, 0x40
	if ad[32]&up == 0 || ad[32]&uv == 0 {
		return Registered{}, errors.New("the device did not confirm the person (user verification is required)")
	}
	if ad[32]&at == 0 {
		return Registered{}, errors.New("the authenticator data holds no new credential")
	}
	key, err := keyFromSPKI(spki, g.Algorithm)
	if err != nil {
		return Registered{}, err
	}
	return Registered{CredentialID: g.CredentialID, Alg: key.Alg, Key: key.JWK, Thumbprint: key.Thumbprint,
		Origin: origin, RPID: rpID, RegisteredAt: now.UTC().Format(approval.TimeLayout)}, nil
}

// keyFromSPKI reads a passkey's public key, checks that it is of the COSE
// algorithm the authenticator named, and writes it as a JWK with go-jose
// (the format's "alg" member added), which our strict reader then checks
// (receipts/jwk: go-jose alone takes members the format refuses).
func keyFromSPKI(spki []byte, alg int) (*jwk.Key, error) {
	pub, err := x509.ParsePKIXPublicKey(spki)
	if err != nil {
		return nil, fmt.Errorf("the passkey's public key does not parse: %w", err)
	}
	var name string
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		if alg != coseES256 || k.Curve != elliptic.P256() {
			return nil, errors.New("an EC passkey must be ES256 on P-256")
		}
		name = jwk.ES256
	case ed25519.PublicKey:
		if alg != coseEdDSA {
			return nil, errors.New("an Ed25519 passkey must name EdDSA (-8)")
		}
		name = jwk.Ed25519
	case *rsa.PublicKey:
		if alg != coseRS256 || k.E != 65537 {
			return nil, errors.New("an RSA passkey must be RS256 with exponent 65537")
		}
		name = jwk.RS256
	default:
		return nil, errors.New("the passkey's key is not ES256, Ed25519 or RS256")
	}
	raw, err := jose.JSONWebKey{Key: pub}.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("the passkey's public key as a JWK: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("the passkey's public key as a JWK: %w", err)
	}
	m["alg"] = name
	return jwk.CheckKey(m, name)
}

// loadRegistered reads the page's passkey file; os.ErrNotExist when none.
func loadRegistered(path string) (*Registered, error) {
	var r Registered
	if err := readStrict(path, &r); err != nil {
		return nil, err
	}
	if _, err := r.JWK(); err != nil {
		return nil, fmt.Errorf("page: the passkey file %s holds no passkey key: %w", path, err)
	}
	return &r, nil
}
