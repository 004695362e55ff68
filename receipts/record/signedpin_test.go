package record

import (
	"bytes"
	"context"
	"encoding/base64"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
)

// The way SignChecked wrote a record before its envelope became one text
// whose parts the record's texts are: each base64url text by
// encoding/base64's EncodeToString, the envelope put together from them
// afterwards. The tests below hold the new way to it, byte for byte.

func oldSignChecked(ctx context.Context, kind Kind, content map[string]any, s jwk.Signer) (*Record, []byte, error) {
	text, err := canon.Marshal(content)
	if err != nil {
		return nil, nil, err
	}
	info := kinds[kind]
	payload := base64.RawURLEncoding.EncodeToString(text)
	r := &Record{Kind: kind, Payload: payload, ContentText: text, Fingerprint: canon.Fingerprint(text)}
	for _, h := range info.headers {
		sig, err := s.Sign(ctx, h.alg, signingInput(h.b64, payload))
		if err != nil {
			return nil, nil, err
		}
		r.Signatures = append(r.Signatures, Signature{Protected: h.b64, Alg: h.alg,
			Signature: base64.RawURLEncoding.EncodeToString(sig), sig: sig})
	}
	parsed, err := canon.Parse(text)
	if err != nil {
		return nil, nil, err
	}
	r.Content = parsed.(map[string]any)
	return r, oldEnvelopeBytes(r), nil
}

func oldEnvelopeBytes(r *Record) []byte {
	b := []byte(`{"payload":"`)
	b = append(b, r.Payload...)
	b = append(b, `","signatures":[`...)
	for i, s := range r.Signatures {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"protected":"`...)
		b = append(b, s.Protected...)
		b = append(b, `","signature":"`...)
		b = append(b, s.Signature...)
		b = append(b, `"}`...)
	}
	return append(b, `]}`...)
}

// remembering signs each input once and gives the same signature for it
// again (ML-DSA-87's are hedged), so that the old and new ways sign alike.
// It vouches for its signatures when what it wraps does; long makes every
// signature one byte longer than the usual length (a signer elsewhere may
// give one), which the envelope's reserved length does not cover.
type remembering struct {
	jwk.Signer
	long bool
	mu   sync.Mutex
	sigs map[string][]byte
}

func (m *remembering) Sign(ctx context.Context, alg string, input []byte) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := alg + " " + string(input)
	if sig, ok := m.sigs[k]; ok {
		return bytes.Clone(sig), nil
	}
	sig, err := m.Signer.Sign(ctx, alg, input)
	if err != nil {
		return nil, err
	}
	if m.long {
		sig = append(sig, 7)
	}
	if m.sigs == nil {
		m.sigs = map[string][]byte{}
	}
	m.sigs[k] = sig
	return bytes.Clone(sig), nil
}

func (m *remembering) SignaturesChecked() bool { return !m.long && SignaturesChecked(m.Signer) }

// appending is remembering appending its signatures to the buffer it is
// given (jwk.AppendSigner), as a local key set does: SignChecked then
// signs into buffers it uses again.
type appending struct{ *remembering }

func (a appending) AppendSign(ctx context.Context, alg string, dst, input []byte) ([]byte, error) {
	sig, err := a.Sign(ctx, alg, input)
	if err != nil {
		return nil, err
	}
	return append(dst, sig...), nil
}

// signers are the ways a record is signed in the tests below: by a signer
// that returns its signatures and by one that appends them.
func signers(long bool) map[string]func() jwk.Signer {
	return map[string]func() jwk.Signer{
		"returns": func() jwk.Signer { return &remembering{Signer: testSigner, long: long} },
		"appends": func() jwk.Signer { return appending{&remembering{Signer: testSigner, long: long}} },
	}
}

// sameRecord reports whether a and b are the same record: every field,
// and each signature's bytes (kept, or read back from its text).
func sameRecord(t *testing.T, a, b *Record) bool {
	t.Helper()
	if len(a.Signatures) != len(b.Signatures) {
		return false
	}
	strip := func(r *Record) *Record {
		c := *r
		c.Signatures = slices.Clone(r.Signatures)
		for i := range c.Signatures {
			c.Signatures[i].sig = nil
		}
		return &c
	}
	for i := range a.Signatures {
		x, err1 := a.Signatures[i].Bytes()
		y, err2 := b.Signatures[i].Bytes()
		if err1 != nil || err2 != nil || !bytes.Equal(x, y) {
			return false
		}
	}
	return reflect.DeepEqual(strip(a), strip(b))
}

// pinContents are contents of every kind SignChecked writes: short and
// long payloads (across the chunks base64url is written in), texts
// outside ASCII.
func pinContents() []struct {
	kind    Kind
	content map[string]any
} {
	long := stubContent()
	var details []any
	for i := range 32 {
		details = append(details, map[string]any{"name": "provared.call", "sha256": canon.Fingerprint([]byte{byte(i)})})
	}
	long["details"] = details
	long["seq"] = int64(7)
	long["previous"] = "BAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQ"
	return []struct {
		kind    Kind
		content map[string]any
	}{
		{Stub, stubContent()},
		{Stub, long},
		{Countersignature, map[string]any{"type": "provared.countersignature.v0", "stub": "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE", "when": "2026-01-02T03:04:05Z"}},
	}
}

// TestSignedPinnedToOldWay: the record and the envelope SignChecked writes
// are the old way's, byte for byte, for contents long and short, and for
// signatures of an unusual length; and the envelope is the canonical text
// of the record's value.
func TestSignedPinnedToOldWay(t *testing.T) {
	ctx := context.Background()
	for _, long := range []bool{false, true} {
		for way, signer := range signers(long) {
			for i, c := range pinContents() {
				s := signer()
				old, oldEnv, err := oldSignChecked(ctx, c.kind, c.content, s)
				if err != nil {
					t.Fatal(err)
				}
				got, err := SignChecked(ctx, c.kind, c.content, s)
				if long {
					// An unusual length does not check: refused, as before.
					if err == nil {
						t.Fatalf("%s, case %d: a signature of the wrong length was taken", way, i)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				env := got.AppendEnvelope(nil)
				if !bytes.Equal(env, oldEnv) {
					t.Fatalf("%s, case %d: envelope\n%s\nold\n%s", way, i, env, oldEnv)
				}
				if !bytes.Equal(env, canon.MustMarshal(got.Record().Value())) || got.EnvelopeLen() != len(env) {
					t.Fatalf("%s, case %d: the envelope is not the record's canonical value", way, i)
				}
				if r := got.Record(); !sameRecord(t, r, old) {
					t.Fatalf("%s, case %d: record\n%+v\nold\n%+v", way, i, r, old)
				}
				if err := VerifyHybrid(got.Record(), testSigner.Keys()); err != nil {
					t.Fatalf("%s, case %d: %v", way, i, err)
				}
			}
		}
	}
}

// TestPreparedEnvelopeGrows: a signer that vouches for signatures longer
// than the usual length (the envelope's reserved room) still gets the
// old way's bytes: the builder grows, and the record's texts stay right.
func TestPreparedEnvelopeGrows(t *testing.T) {
	ctx := context.Background()
	for i, c := range pinContents() {
		s := &vouchingLong{remembering{Signer: testSigner, long: true}}
		old, oldEnv, err := oldSignChecked(ctx, c.kind, c.content, s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := SignChecked(ctx, c.kind, c.content, s)
		if err != nil {
			t.Fatal(err)
		}
		if env := got.AppendEnvelope(nil); !bytes.Equal(env, oldEnv) {
			t.Fatalf("case %d: envelope\n%s\nold\n%s", i, env, oldEnv)
		}
		if r := got.Record(); !sameRecord(t, r, old) {
			t.Fatalf("case %d: record differs from the old way's", i)
		}
	}
}

// vouchingLong vouches for its long signatures (a wrong vouch, which only
// the length of the envelope is tested with here).
type vouchingLong struct{ remembering }

func (v *vouchingLong) SignaturesChecked() bool { return true }

// TestPrepared: Prepare's fingerprint is the signed record's; a zero
// Prepared signs nothing; Prepare refuses what SignChecked refuses.
func TestPrepared(t *testing.T) {
	p, err := Prepare(Stub, stubContent())
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Sign(context.Background(), testSigner)
	if err != nil {
		t.Fatal(err)
	}
	if p.IsZero() || s.Fingerprint() != p.Fingerprint() || s.Fingerprint() != canon.Fingerprint(canon.MustMarshal(stubContent())) {
		t.Fatalf("fingerprints %s, %s", p.Fingerprint(), s.Fingerprint())
	}
	var zero Prepared
	if _, err := zero.Sign(context.Background(), testSigner); err == nil || !zero.IsZero() || zero.Fingerprint() != "" {
		t.Fatal("a zero Prepared signed")
	}
	bad := stubContent()
	bad["type"] = "provared.refusal.v0"
	if _, err := Prepare(Stub, bad); err == nil {
		t.Fatal("a stub typed as a refusal was prepared")
	}
	if _, err := Prepare(Slip, stubContent()); err == nil {
		t.Fatal("a slip was prepared")
	}
}

// FuzzSignedEnvelope: for stubs of any number of details (payloads of
// many lengths) and any place in the chain, the record and envelope
// SignChecked writes are the old way's.
func FuzzSignedEnvelope(f *testing.F) {
	f.Add(uint8(0), int64(0), "executor")
	f.Add(uint8(31), int64(1<<40), "a")
	f.Fuzz(func(t *testing.T, n uint8, seq int64, with string) {
		c := stubContent()
		var details []any
		for i := range 1 + int(n)%32 {
			details = append(details, map[string]any{"name": "provared.call", "sha256": canon.Fingerprint([]byte{byte(i), n})})
		}
		c["details"], c["with"] = details, with
		if seq > 0 {
			c["seq"], c["previous"] = seq, "BAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQ"
		}
		if ValidateStub(c) != nil {
			return
		}
		for way, signer := range signers(false) {
			s := signer()
			old, oldEnv, err := oldSignChecked(context.Background(), Stub, c, s)
			if err != nil {
				t.Fatal(err)
			}
			got, err := SignChecked(context.Background(), Stub, c, s)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.AppendEnvelope(nil), oldEnv) || !sameRecord(t, got.Record(), old) {
				t.Fatalf("%s: differs from the old way", way)
			}
		}
	})
}
