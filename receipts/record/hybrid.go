package record

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

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
	p, err := Prepare(kind, content)
	if err != nil {
		return Signed{}, err
	}
	return p.Sign(ctx, s)
}

// Prepared is a hybrid record's content, confirmed and written canonically
// once, before it is signed: its fingerprint is known before any
// signature, and Sign signs the very text Prepare wrote. Only Prepare
// makes one; the content map handed to it must not change afterwards.
type Prepared struct{ p *prepared }

type prepared struct {
	kind        Kind
	info        *kindInfo
	content     map[string]any // as a reader gets it back from text (canon.ReadBack): no map of the caller's
	text        []byte         // canon.Marshal of the content given
	fingerprint string
}

// Prepare confirms a hybrid record's content (its kind's validator and
// "type") and writes it canonically, as SignChecked does before signing.
func Prepare(kind Kind, content map[string]any) (Prepared, error) {
	validate, ok := validators[kind]
	if !ok {
		return Prepared{}, fmt.Errorf("signing a %s: only stubs, countersignatures, refusals and acknowledgements are written here", kind)
	}
	return prepare(kind, content, validate)
}

// PrepareWith is Prepare for a hybrid kind whose content this package does
// not confirm itself (a pass, whose limits are a slip's: receipts/pass
// gives validate). A kind this package does confirm is confirmed by its
// own validator as well; a passkey kind or a seal is refused.
func PrepareWith(kind Kind, content map[string]any, validate func(map[string]any) error) (Prepared, error) {
	info, ok := kinds[kind]
	if !ok || info.passkey || len(info.headers) != 2 || validate == nil {
		return Prepared{}, fmt.Errorf("signing a %s: only the kinds signed by a key set of two keys are written here", kind)
	}
	own := func(v any) error {
		if builtIn, ok := validators[kind]; ok {
			if err := builtIn(v); err != nil {
				return err
			}
		}
		return validate(content)
	}
	return prepare(kind, content, own)
}

// SignWith is SignChecked for a kind PrepareWith writes.
func SignWith(ctx context.Context, kind Kind, content map[string]any, validate func(map[string]any) error, s jwk.Signer) (Signed, error) {
	p, err := PrepareWith(kind, content, validate)
	if err != nil {
		return Signed{}, err
	}
	return p.Sign(ctx, s)
}

func prepare(kind Kind, content map[string]any, validate func(any) error) (Prepared, error) {
	info := kinds[kind]
	if err := validate(content); err != nil {
		return Prepared{}, fmt.Errorf("signing a %s: %w", kind, err)
	}
	if t, _ := content["type"].(string); t != info.contentType {
		return Prepared{}, fmt.Errorf("signing a %s: %w", kind, problem.New(CodeBadField, "type: must be %s", info.contentType))
	}
	text, err := canon.Marshal(content)
	if err != nil {
		return Prepared{}, fmt.Errorf("signing a %s: %w", kind, err)
	}
	// The content as a reader gets it back (int64 numbers, fresh maps), so
	// that later changes to the caller's map cannot reach the record: made
	// from the map Marshal has just written, not by reading text again.
	back, isObject := canon.ReadBack(content).(map[string]any)
	if !isObject {
		return Prepared{}, fmt.Errorf("signing a %s: the content read back is not an object", kind)
	}
	return Prepared{&prepared{kind: kind, info: info, content: back, text: text, fingerprint: canon.Fingerprint(text)}}, nil
}

// IsZero reports whether p holds nothing (it was not made by Prepare).
func (p Prepared) IsZero() bool { return p.p == nil }

// Fingerprint is the fingerprint the record will have: that of its
// canonical content.
func (p Prepared) Fingerprint() string {
	if p.p == nil {
		return ""
	}
	return p.p.fingerprint
}

// Sign signs the prepared content with both keys of s, as SignChecked
// does. The envelope is written once, as a text whose parts the record's
// payload and signature texts are: each base64url text is written once,
// straight into it.
func (p Prepared) Sign(ctx context.Context, s jwk.Signer) (Signed, error) {
	if p.p == nil {
		return Signed{}, errors.New("signing a record: it was not prepared (record.Prepare)")
	}
	kind, info, text := p.p.kind, p.p.info, p.p.text
	keys := s.Keys()
	if keys.Ed25519 == nil || keys.MLDSA87 == nil {
		return Signed{}, fmt.Errorf("signing a %s: the signer holds no complete key set", kind)
	}
	// A signature from a signer that does not vouch for its own is checked
	// against the keys it claims before it is written; one that does (a
	// LocalSigner signs with the very keys it reports, Vault Transit's
	// signer checks each signature as it arrives) is not checked again.
	checked := SignaturesChecked(s)
	payloadLen := canon.B64Len(len(text))
	if writtenSize(payloadLen, info) > MaxRecordSize {
		return Signed{}, fmt.Errorf("signing a %s: %w", kind, problem.New(CodeTooLarge, "the record would be larger than 65,536"))
	}
	// The envelope canonically: its members in their sorted order, each
	// text base64url (nothing to escape), so no general marshalling is
	// needed. Its length is known but for a signature of an unusual length
	// from a signer elsewhere, which only makes the builder grow.
	var env strings.Builder
	env.Grow(envelopeLen(payloadLen, info))
	env.WriteString(`{"payload":"`)
	canon.WriteB64(&env, text)
	payload := env.String()[len(`{"payload":"`):]
	env.WriteString(`","signatures":[`)
	size := len(payload)
	r := &Record{Kind: kind, Payload: payload, ContentText: text, Fingerprint: p.p.fingerprint,
		Signatures: make([]Signature, 0, len(info.headers))}
	n, err := signInto(ctx, r, &env, s, keys, info, checked)
	if err != nil {
		return Signed{}, err
	}
	size += n
	env.WriteString(`]}`)
	if size > MaxRecordSize {
		return Signed{}, fmt.Errorf("signing a %s: %w", kind, problem.New(CodeTooLarge, "the record would be larger than 65,536"))
	}
	r.Content = p.p.content
	return Signed{&signed{rec: *r, keys: keys, envelope: env.String()}}, nil
}

// signInto signs r's payload with both keys of s, in the order of its
// kind's headers (info), writes each signature entry to env and adds it to
// r.Signatures; it returns the length of the entries' texts (for the
// record's size). A signature is checked against keys, the set the record
// carries (s.Keys(), asked once by the caller), unless s vouches for its
// own (checked).
//
// A signer that appends its signature to a buffer (jwk.AppendSigner) signs
// into one used again, from a signing input in one used again: only the
// signature's text is kept (Signature.Bytes reads it back).
func signInto(ctx context.Context, r *Record, env *strings.Builder, s jwk.Signer, keys jwk.KeySet, info *kindInfo, checked bool) (int, error) {
	kind := r.Kind
	appender, appends := s.(jwk.AppendSigner)
	var bufs *signBufs
	if appends {
		var ok bool
		if bufs, ok = signBufPool.Get().(*signBufs); !ok {
			bufs = new(signBufs)
		}
		defer signBufPool.Put(bufs)
	}
	size := 0
	for i, h := range info.headers {
		var input, sig, raw []byte
		var err error
		if appends {
			bufs.input = appendSigningInput(bufs.input[:0], h.b64, r.Payload)
			input = bufs.input
			if sig, err = appender.AppendSign(ctx, h.alg, bufs.sig[:0], input); err == nil {
				bufs.sig = sig[:0]
			}
		} else {
			input = signingInput(h.b64, r.Payload)
			sig, err = s.Sign(ctx, h.alg, input)
			raw = sig
		}
		if err != nil {
			return 0, fmt.Errorf("signing a %s with %s: %w", kind, h.alg, err)
		}
		if !checked && !keys.Key(h.alg).Verify(input, sig) {
			return 0, fmt.Errorf("signing a %s: the %s signature does not check against the signer's keys", kind, h.alg)
		}
		if i > 0 {
			env.WriteByte(',')
		}
		env.WriteString(`{"protected":"`)
		env.WriteString(h.b64)
		env.WriteString(`","signature":"`)
		from := env.Len()
		canon.WriteB64(env, sig)
		b64 := env.String()[from:]
		env.WriteString(`"}`)
		size += len(h.b64) + len(b64)
		r.Signatures = append(r.Signatures, Signature{Protected: h.b64, Alg: h.alg, Signature: b64, sig: raw})
	}
	return size, nil
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

// writtenSize is the size (§3.1) a hybrid record with a payload of
// payloadLen characters will have.
func writtenSize(payloadLen int, info *kindInfo) int {
	return payloadLen + len(info.headers[0].b64) + len(info.headers[1].b64) + ed25519SigChars + mldsaSigChars
}

// envelopeLen is the length of the envelope of a hybrid record with a
// payload of payloadLen characters and signatures of the usual lengths.
func envelopeLen(payloadLen int, info *kindInfo) int {
	return len(`{"payload":"","signatures":[]}`) + payloadLen + 2*len(`{"protected":"","signature":""}`) + len(`,`) +
		len(info.headers[0].b64) + len(info.headers[1].b64) + ed25519SigChars + mldsaSigChars
}

func signingInput(protected, payload string) []byte {
	return appendSigningInput(make([]byte, 0, len(protected)+1+len(payload)), protected, payload)
}

func appendSigningInput(dst []byte, protected, payload string) []byte {
	dst = append(dst, protected...)
	dst = append(dst, '.')
	return append(dst, payload...)
}

// signBufs are the buffers Prepared.Sign signs with, for a signer that
// appends its signatures (jwk.AppendSigner): the signing input and the
// signature, each read once and then written over by the next.
type signBufs struct{ input, sig []byte }

var signBufPool sync.Pool // of *signBufs
