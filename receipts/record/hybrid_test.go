package record

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
)

func refusalContent() map[string]any {
	return map[string]any{
		"type":   "provared.refusal.v0",
		"id":     "AgICAgICAgICAgICAgICAg",
		"slip":   "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE",
		"by":     map[string]any{"keys": testSigner.Keys().Value(), "name": "executor"},
		"action": "executor.unlisted",
		"reason": "other",
		"when":   "2026-11-29T19:00:00Z",
	}
}

func TestSignThenVerifyHybrid(t *testing.T) {
	cases := []struct {
		kind    Kind
		content map[string]any
	}{
		{Stub, stubContent()},
		{Refusal, refusalContent()},
		{Countersignature, map[string]any{"type": "provared.countersignature.v0", "stub": "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE", "when": "2026-11-29T19:00:00Z"}},
		{Acknowledgement, map[string]any{"type": "provared.acknowledgement.v0", "id": "AgICAgICAgICAgICAgICAg", "slip": "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE", "cancellation": "AwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwM", "when": "2026-11-29T19:00:00Z"}},
	}
	other, err := jwk.NewLocalSigner(jwk.NewSeeds())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(string(tc.kind), func(t *testing.T) {
			r, err := Sign(context.Background(), tc.kind, tc.content, testSigner)
			if err != nil {
				t.Fatal(err)
			}
			back, err := Parse(r.Value(), tc.kind)
			if err != nil {
				t.Fatalf("written record does not parse: %v", err)
			}
			if back.Fingerprint != r.Fingerprint || string(back.ContentText) != string(r.ContentText) {
				t.Fatal("read back differs")
			}
			if err := VerifyHybrid(back, testSigner.Keys()); err != nil {
				t.Fatalf("does not verify: %v", err)
			}
			if got := problem.Code(VerifyHybrid(back, other.Keys())); got != CodeSignatureInvalid {
				t.Fatalf("verifies under other keys: %q", got)
			}
			mixed := jwk.KeySet{Ed25519: testSigner.Keys().Ed25519, MLDSA87: other.Keys().MLDSA87}
			if got := problem.Code(VerifyHybrid(back, mixed)); got != CodeSignatureInvalid {
				t.Fatalf("verifies with the ML-DSA-87 half from other keys: %q", got)
			}
		})
	}
	// The content given is not the record's: changing it afterwards changes nothing.
	c := stubContent()
	r, err := Sign(context.Background(), Stub, c, testSigner)
	if err != nil {
		t.Fatal(err)
	}
	c["action"] = "other"
	if r.Content["action"] != "provared.code.run" || r.Content["seq"] != int64(0) {
		t.Fatal("the record's content is the caller's map, or not canonical values")
	}
}

// TestOneByteChanges: a written stub and refusal with any one character of
// payload, protected or either signature changed is refused, with a code
// that fits where the change is; a change of the decoded bytes that leaves
// the envelope well formed gives signature-invalid.
func TestOneByteChanges(t *testing.T) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	next := func(c byte) byte { return alphabet[(strings.IndexByte(alphabet, c)+1)%64] }
	check := func(t *testing.T, v map[string]any, kind Kind, allowed ...string) {
		t.Helper()
		r, err := Parse(v, kind)
		if err == nil {
			err = VerifyHybrid(r, testSigner.Keys())
		}
		if code := problem.Code(err); !slices.Contains(allowed, code) {
			t.Fatalf("code %q (%v), want one of %v", code, err, allowed)
		}
	}
	for _, kc := range []struct {
		kind    Kind
		content map[string]any
	}{{Stub, stubContent()}, {Refusal, refusalContent()}} {
		t.Run(string(kc.kind), func(t *testing.T) {
			r, err := Sign(context.Background(), kc.kind, kc.content, testSigner)
			if err != nil {
				t.Fatal(err)
			}
			base := r.Value()
			field := func(v map[string]any, where string) (get func() string, set func(string)) {
				switch where {
				case "payload":
					return func() string { return v["payload"].(string) }, func(s string) { v["payload"] = s }
				default:
					i := int(where[len(where)-1] - '0')
					name := where[:len(where)-1]
					e := v["signatures"].([]any)[i].(map[string]any)
					return func() string { return e[name].(string) }, func(s string) { e[name] = s }
				}
			}
			fits := map[string][]string{
				"payload":    {CodeBadBase64url, CodeNotCanonical, CodeBadField, CodeTypeMismatch, CodeSignatureInvalid},
				"protected0": {CodeBadBase64url, CodeUnknownType, CodeTypeMismatch},
				"protected1": {CodeBadBase64url, CodeUnknownType, CodeTypeMismatch},
				"signature0": {CodeBadBase64url, CodeSignatureInvalid},
				"signature1": {CodeBadBase64url, CodeSignatureInvalid},
			}
			for where, allowed := range fits {
				t.Run(where, func(t *testing.T) {
					get, _ := field(base, where)
					n := len(get())
					step := 1
					if n > 1000 {
						step = 61 // the ML-DSA-87 signature: every 61st character, and the last
					}
					for i := 0; i < n; i += step {
						for _, at := range []int{i, n - 1} {
							v := deepCopy(base).(map[string]any)
							g, s := field(v, where)
							b := []byte(g())
							b[at] = next(b[at])
							s(string(b))
							check(t, v, kc.kind, allowed...)
						}
					}
					// One decoded byte flipped, re-encoded: a well-formed envelope
					// whose signature no longer checks.
					if where == "payload" || strings.HasPrefix(where, "signature") {
						v := deepCopy(base).(map[string]any)
						g, s := field(v, where)
						raw, err := canon.UnB64(g())
						if err != nil {
							t.Fatal(err)
						}
						if where == "payload" {
							raw = []byte(strings.Replace(string(raw), `"id":"AgI`, `"id":"AgM`, 1))
						} else {
							raw[len(raw)/2] ^= 0x01
						}
						s(canon.B64(raw))
						check(t, v, kc.kind, CodeSignatureInvalid)
					}
				})
			}
			// The other kind's header in place of one: layout or type.
			v := deepCopy(base).(map[string]any)
			_, s := field(v, "protected1")
			s(kc.kind.ProtectedHeaders()[0])
			check(t, v, kc.kind, CodeBadLayout)
		})
	}
}

// misbehavingSigner stands for a remote signer (such as Vault Transit) that
// returns a wrong signature or fails; no real one can be made to misbehave
// on demand, so this fake wraps the real local signer.
type misbehavingSigner struct {
	jwk.Signer
	corrupt, fail string
}

func (m misbehavingSigner) Sign(ctx context.Context, alg string, in []byte) ([]byte, error) {
	if alg == m.fail {
		return nil, errors.New("the signer is down")
	}
	sig, err := m.Signer.Sign(ctx, alg, in)
	if alg == m.corrupt && err == nil {
		sig[len(sig)-1] ^= 1
	}
	return sig, err
}

func TestSignRefusals(t *testing.T) {
	ctx := context.Background()
	bad := stubContent()
	bad["seq"] = int64(1)
	wrongType := stubContent()
	wrongType["type"] = "provared.refusal.v0"
	noType := stubContent()
	delete(noType, "type")
	tests := []struct {
		name    string
		kind    Kind
		content map[string]any
		signer  jwk.Signer
		code    string
	}{
		{"content that fails its check", Stub, bad, testSigner, CodeBadField},
		{"nil content", Stub, nil, testSigner, CodeBadField},
		{"the type of another kind", Stub, wrongType, testSigner, CodeBadField},
		{"no type", Stub, noType, testSigner, CodeBadField},
		{"a kind not written here", Slip, stubContent(), testSigner, problem.CheckFailed},
		{"a kind unknown", Kind("x"), stubContent(), testSigner, problem.CheckFailed},
		{"a corrupted Ed25519 signature", Stub, stubContent(), misbehavingSigner{Signer: testSigner, corrupt: jwk.Ed25519}, problem.CheckFailed},
		{"a corrupted ML-DSA-87 signature", Stub, stubContent(), misbehavingSigner{Signer: testSigner, corrupt: jwk.MLDSA87}, problem.CheckFailed},
		{"a failing ML-DSA-87 signer", Stub, stubContent(), misbehavingSigner{Signer: testSigner, fail: jwk.MLDSA87}, problem.CheckFailed},
		{"a signer with no keys", Stub, stubContent(), misbehavingSigner{Signer: emptySigner{}}, problem.CheckFailed},
		{"a signer whose keys change once asked (signing with the new ones)", Stub, stubContent(), rotatingSigner(t), problem.CheckFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Sign(ctx, tc.kind, tc.content, tc.signer)
			if err == nil || r != nil {
				t.Fatal("signed")
			}
			if got := problem.Code(err); got != tc.code {
				t.Fatalf("code %q (%v), want %q", got, err, tc.code)
			}
		})
	}
	// The size a written record will have is computed before signing.
	info := kinds[Stub]
	room := MaxRecordSize - writtenSize(0, info)
	if writtenSize(len(strings.Repeat("A", room)), info) != MaxRecordSize {
		t.Fatal("writtenSize")
	}
	r, err := Sign(ctx, Stub, stubContent(), testSigner)
	if err != nil {
		t.Fatal(err)
	}
	if got := Size(r.Value()); got != writtenSize(len(r.Payload), info) {
		t.Fatalf("written size %d, measured %d", writtenSize(len(r.Payload), info), got)
	}
}

// rotating stands for a remote signer whose key is rotated while a record
// is signed: the first Keys() gives the set before, every later one the set
// after, and it signs with the set after. The record carries the set of
// the first Keys(), so its signatures must be checked against that one,
// not against a set asked for again. No real signer rotates on demand.
type rotating struct {
	before, after jwk.Signer
	asked         int
}

func rotatingSigner(t *testing.T) *rotating {
	ed, ml := jwk.NewSeeds()
	after, err := jwk.NewLocalSigner(ed, ml)
	if err != nil {
		t.Fatal(err)
	}
	return &rotating{before: testSigner, after: misbehavingSigner{Signer: after}}
}

func (r *rotating) Keys() jwk.KeySet {
	r.asked++
	if r.asked == 1 {
		return r.before.Keys()
	}
	return r.after.Keys()
}

func (r *rotating) Sign(ctx context.Context, alg string, in []byte) ([]byte, error) {
	return r.after.Sign(ctx, alg, in)
}

type emptySigner struct{}

func (emptySigner) Keys() jwk.KeySet { return jwk.KeySet{} }
func (emptySigner) Sign(context.Context, string, []byte) ([]byte, error) {
	return nil, errors.New("no keys")
}

func TestVerifyHybridRefusesWhatIsNotHybrid(t *testing.T) {
	r, err := Sign(context.Background(), Stub, stubContent(), testSigner)
	if err != nil {
		t.Fatal(err)
	}
	ks := testSigner.Keys()
	oneSig := *r
	oneSig.Signatures = r.Signatures[:1]
	asSlip := *r
	asSlip.Kind = Slip
	swapped := *r
	swapped.Signatures = []Signature{r.Signatures[1], r.Signatures[0]}
	badB64 := *r
	badB64.Signatures = []Signature{{Protected: r.Signatures[0].Protected, Signature: "A"}, r.Signatures[1]}
	for name, tc := range map[string]struct {
		r  *Record
		ks jwk.KeySet
	}{
		"nil record":        {nil, ks},
		"one signature":     {&oneSig, ks},
		"a passkey kind":    {&asSlip, ks},
		"swapped":           {&swapped, ks},
		"signature not b64": {&badB64, ks},
		"no keys":           {r, jwk.KeySet{}},
		"half a key set":    {r, jwk.KeySet{Ed25519: ks.Ed25519}},
	} {
		if got := problem.Code(VerifyHybrid(tc.r, tc.ks)); got != CodeSignatureInvalid {
			t.Errorf("%s: code %q", name, got)
		}
	}
	if err := VerifyHybrid(r, ks); err != nil {
		t.Fatal(err)
	}
}
