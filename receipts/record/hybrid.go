package record

import (
	"context"
	"fmt"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
)

// validators are the content checks of the kinds Sign writes.
var validators = map[Kind]func(any) error{
	Stub:             validateStub,
	Countersignature: validateCountersignature,
	Refusal:          validateRefusal,
	Acknowledgement:  validateAcknowledgement,
}

// Sign writes a record of a hybrid kind (stub, countersignature, refusal,
// acknowledgement): the content is confirmed by its kind's validator and
// must carry the kind's "type"; it is written canonically, and signed by s
// with both keys, Ed25519 then ML-DSA-87, each under its exact protected
// header. Each signature from a signer that does not vouch for its own
// signatures (see CheckedSigner) is checked against s.Keys() before the
// record is returned. A record over MaxRecordSize is refused ("too-large")
// before anything is signed. The returned record is as Parse would read it.
func Sign(ctx context.Context, kind Kind, content map[string]any, s jwk.Signer) (*Record, error) {
	signed, err := SignChecked(ctx, kind, content, s)
	if err != nil {
		return nil, err
	}
	return signed.Record(), nil
}

// SignChecked is Sign returning the record as a Signed: a record whose
// every signature is known to check against the signer's keys, which the
// book appends without checking them again.
func SignChecked(ctx context.Context, kind Kind, content map[string]any, s jwk.Signer) (Signed, error) {
	validate, ok := validators[kind]
	if !ok {
		return Signed{}, fmt.Errorf("signing a %s: only stubs, countersignatures, refusals and acknowledgements are written here", kind)
	}
	info := kinds[kind]
	if err := validate(content); err != nil {
		return Signed{}, fmt.Errorf("signing a %s: %w", kind, err)
	}
	if t, _ := content["type"].(string); t != info.contentType {
		return Signed{}, fmt.Errorf("signing a %s: %w", kind, problem.New(CodeBadField, "type: must be %s", info.contentType))
	}
	text, err := canon.Marshal(content)
	if err != nil {
		return Signed{}, fmt.Errorf("signing a %s: %w", kind, err)
	}
	keys := s.Keys()
	if keys.Ed25519 == nil || keys.MLDSA87 == nil {
		return Signed{}, fmt.Errorf("signing a %s: the signer holds no complete key set", kind)
	}
	// A signature from a signer that does not vouch for its own is checked
	// against the keys it claims before it is written; one that does (a
	// LocalSigner signs with the very keys it reports, Vault Transit's
	// signer checks each signature as it arrives) is not checked again.
	checked := SignaturesChecked(s)
	payload := canon.B64(text)
	if writtenSize(payload, info) > MaxRecordSize {
		return Signed{}, fmt.Errorf("signing a %s: %w", kind, problem.New(CodeTooLarge, "the record would be larger than 65,536"))
	}
	size := len(payload)
	r := &Record{Kind: kind, Payload: payload, ContentText: text, Fingerprint: canon.Fingerprint(text)}
	for _, h := range info.headers {
		input := signingInput(h.b64, payload)
		sig, err := s.Sign(ctx, h.alg, input)
		if err != nil {
			return Signed{}, fmt.Errorf("signing a %s with %s: %w", kind, h.alg, err)
		}
		if !checked && !keys.Key(h.alg).Verify(input, sig) {
			return Signed{}, fmt.Errorf("signing a %s: the %s signature does not check against the signer's keys", kind, h.alg)
		}
		b64 := canon.B64(sig)
		size += len(h.b64) + len(b64)
		r.Signatures = append(r.Signatures, Signature{Protected: h.b64, Alg: h.alg, Signature: b64, sig: sig})
	}
	if size > MaxRecordSize {
		return Signed{}, fmt.Errorf("signing a %s: %w", kind, problem.New(CodeTooLarge, "the record would be larger than 65,536"))
	}
	// The content as a reader gets it back (int64 numbers, fresh maps), so
	// that later changes to the caller's map cannot reach the record.
	parsed, err := canon.Parse(text)
	if err != nil {
		return Signed{}, fmt.Errorf("signing a %s: reading the content back: %w", kind, err)
	}
	content, isObject := parsed.(map[string]any)
	if !isObject {
		return Signed{}, fmt.Errorf("signing a %s: the content read back is not an object", kind)
	}
	r.Content = content
	return newSigned(r, keys), nil
}

// VerifyHybrid checks both signatures of a hybrid-signed record (Ed25519
// then ML-DSA-87) against a key set. Both must check: a record whose
// ML-DSA-87 half is missing or wrong never counts. Any failure gives
// "signature-invalid".
func VerifyHybrid(r *Record, ks jwk.KeySet) error {
	if r == nil {
		return problem.New(CodeSignatureInvalid, "no record")
	}
	info, ok := kinds[r.Kind]
	if !ok || info.passkey || len(info.headers) != 2 || len(r.Signatures) != 2 {
		return problem.New(CodeSignatureInvalid, "a %s is not signed by a key set of two keys", r.Kind)
	}
	if ks.Ed25519 == nil || ks.MLDSA87 == nil {
		return problem.New(CodeSignatureInvalid, "no complete key set to check the %s against", r.Kind)
	}
	for i, h := range info.headers {
		s := &r.Signatures[i]
		if s.Protected != h.b64 {
			return problem.New(CodeSignatureInvalid, "signature %d of the %s is not labelled %s", i, r.Kind, h.alg)
		}
		sig, err := s.Bytes()
		if err != nil || !ks.Key(h.alg).Verify(r.SigningInput(i), sig) {
			return problem.New(CodeSignatureInvalid, "the %s signature of the %s does not check", h.alg, r.Kind)
		}
	}
	return nil
}

// The lengths in base64url of the two signatures of a key set.
var (
	ed25519SigChars = len(canon.B64(make([]byte, 64)))
	mldsaSigChars   = len(canon.B64(make([]byte, jwk.MLDSA87SignatureSize)))
)

// writtenSize is the size (§3.1) a hybrid record with this payload will have.
func writtenSize(payload string, info *kindInfo) int {
	return len(payload) + len(info.headers[0].b64) + len(info.headers[1].b64) + ed25519SigChars + mldsaSigChars
}

func signingInput(protected, payload string) []byte {
	out := make([]byte, 0, len(protected)+1+len(payload))
	out = append(out, protected...)
	out = append(out, '.')
	return append(out, payload...)
}
