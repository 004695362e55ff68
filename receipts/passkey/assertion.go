package passkey

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"unicode/utf8"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// The flags of the authenticator data (Web Authentication, section 6.1).
const (
	flagUserPresent   = 0x01
	flagUserVerified  = 0x04
	flagAttestedData  = 0x40
	flagExtensionData = 0x80
)

// State says how far a passkey signature could be checked.
type State string

const (
	// Valid means every step passed and the signature checks.
	Valid State = "valid"
	// Unavailable means every step before the signature passed, but this checker
	// was told to treat the signing method as not built in. Never a pass.
	Unavailable State = "unavailable"
)

// Assertion is what a passkey returned for one challenge, as stored in a
// record: the authenticator data, the client data JSON and the signature
// (DER for ES256, raw for RS256 and Ed25519).
type Assertion struct {
	AuthenticatorData []byte
	ClientDataJSON    []byte
	Signature         []byte
}

// Verify checks the one passkey signature on a slip, an approval or a
// cancellation against the issuer a slip names: its key, origin and rpId
// (format description, section 4.4). It returns nil only when the signature
// is valid; otherwise a *problem.Error with one of the passkey-* codes or
// "signature-invalid", from the first step that fails, in the reference's
// order.
func Verify(issuer *jwk.Key, origin, rpID string, r *record.Record) error {
	_, err := Check(issuer, origin, rpID, r, nil)
	return err
}

// Check is Verify for a checker that may be told to treat some signing
// methods as not built in ("without", for example ["ES256"]): every step
// still runs, and the state is Unavailable instead of a checked signature.
func Check(issuer *jwk.Key, origin, rpID string, r *record.Record, without []string) (State, error) {
	if r == nil || len(r.Signatures) != 1 || r.Signatures[0].Header == nil {
		return "", problem.New("passkey-bad-data", "the record does not carry one passkey signature")
	}
	sig := r.Signatures[0]
	authData, err1 := canon.UnB64(sig.Header.AuthenticatorData)
	clientData, err2 := canon.UnB64(sig.Header.ClientDataJSON)
	if err1 != nil || err2 != nil || !sig.Header.IsText() {
		return "", problem.New("passkey-bad-data", "the passkey values stored with the record are not base64url")
	}
	signature, err := canon.UnB64(sig.Signature)
	if err != nil {
		// The envelope reader has already refused this; kept for safety.
		return "", problem.New("passkey-bad-data", "the passkey signature is not base64url")
	}
	return CheckAssertion(issuer, rpID, origin, r.SigningInput(0), Assertion{authData, clientData, signature}, without)
}

// ParseClientData reads a passkey's client data JSON as an ordinary JSON
// object (it is not canonical), as JSON.parse reads it: any nesting depth,
// any number, the last of repeated member names. Anything else is
// "passkey-bad-data". Members holding text, true/false, null or a number
// (kept as json.Number: none is checked) are returned as they are; a
// member holding an object or a list is returned as a NestedValue, since
// no check reads inside one.
func ParseClientData(b []byte) (map[string]any, error) {
	if !utf8.Valid(b) {
		return nil, problem.New("passkey-bad-data", "the passkey's client data is not utf-8 text")
	}
	notJSON := problem.New("passkey-bad-data", "the passkey's client data is not json")
	// Token reads one token at a time with no limit on nesting (Decode
	// stops at 10,000 levels, where JSON.parse does not).
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	first, err := dec.Token()
	if err != nil {
		return nil, notJSON
	}
	if first != json.Delim('{') {
		if d, ok := first.(json.Delim); ok {
			if err := skipNested(dec, d); err != nil {
				return nil, notJSON
			}
		}
		if _, err := dec.Token(); err != io.EOF {
			return nil, notJSON
		}
		return nil, problem.New("passkey-bad-data", "the passkey's client data is not an object")
	}
	m := map[string]any{}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, notJSON
		}
		name, ok := k.(string)
		if !ok {
			return nil, notJSON
		}
		v, err := dec.Token()
		if err != nil {
			return nil, notJSON
		}
		if d, ok := v.(json.Delim); ok {
			if err := skipNested(dec, d); err != nil {
				return nil, notJSON
			}
			v = NestedValue{}
		}
		m[name] = v
	}
	if end, err := dec.Token(); err != nil || end != json.Delim('}') {
		return nil, notJSON
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, notJSON
	}
	return m, nil
}

// NestedValue stands for an object or a list inside client data.
type NestedValue struct{}

// skipNested reads to the end of the object or list whose opening
// delimiter open has just been read.
func skipNested(dec *json.Decoder, open json.Delim) error {
	if open != '{' && open != '[' {
		return errors.New("a closing delimiter where a value belongs")
	}
	for depth := 1; depth > 0; {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
	return nil
}

// CheckAssertion runs the steps of Web Authentication Level 3, section 7.2,
// that apply offline, over signedBytes (whose SHA-256 is the challenge).
func CheckAssertion(key *jwk.Key, rpID, origin string, signedBytes []byte, a Assertion, without []string) (State, error) {
	client, err := ParseClientData(a.ClientDataJSON)
	if err != nil {
		return "", err
	}
	if t, ok := client["type"].(string); !ok || t != "webauthn.get" {
		return "", problem.New("passkey-wrong-type", "the passkey answer was not made for signing")
	}
	sum := sha256.Sum256(signedBytes)
	if c, ok := client["challenge"].(string); !ok || c != canon.B64(sum[:]) {
		return "", problem.New("passkey-challenge-mismatch", "the passkey signed something other than this record")
	}
	o, ok := client["origin"].(string)
	if cross, _ := client["crossOrigin"].(bool); !ok || o != origin || cross {
		return "", problem.New("passkey-origin-mismatch", "the passkey was used on a page other than the one the slip names")
	}

	ad := a.AuthenticatorData
	if len(ad) < 37 {
		return "", problem.New("passkey-bad-data", "the passkey's authenticator data is cut short")
	}
	rpHash := sha256.Sum256([]byte(rpID))
	if !bytes.Equal(ad[:32], rpHash[:]) {
		return "", problem.New("passkey-rpid-mismatch", "the passkey belongs to a website other than the one the slip names")
	}
	flags := ad[32]
	if flags&flagUserPresent == 0 {
		return "", problem.New("passkey-user-not-present", "the passkey did not record that a person was present")
	}
	if flags&flagUserVerified == 0 {
		return "", problem.New("passkey-user-not-verified", "the device did not confirm the person by fingerprint, face or pin")
	}
	if flags&flagAttestedData != 0 {
		return "", problem.New("passkey-bad-data", "the passkey's authenticator data holds data that belongs to creating a passkey")
	}
	if flags&flagExtensionData == 0 && len(ad) != 37 {
		return "", problem.New("passkey-bad-data", "the passkey's authenticator data has bytes left over")
	}

	clientHash := sha256.Sum256(a.ClientDataJSON)
	signed := make([]byte, 0, len(ad)+32)
	signed = append(signed, ad...)
	signed = append(signed, clientHash[:]...)
	raw := a.Signature
	if key.Alg == "ES256" {
		if raw, err = ECDSADERToRaw(a.Signature); err != nil {
			return "", err
		}
	}
	if slices.Contains(without, key.Alg) {
		return Unavailable, nil
	}
	if !key.Verify(signed, raw) {
		return "", problem.New("signature-invalid", "the passkey signature does not fit the key the slip names")
	}
	return Valid, nil
}
