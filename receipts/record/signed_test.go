package record

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
)

// wrapped hands on what its signer signs, changing the last byte of each
// signature when spoil is set, and says nothing of its signatures.
type wrapped struct {
	jwk.Signer
	spoil bool
}

func (w *wrapped) Sign(ctx context.Context, alg string, input []byte) ([]byte, error) {
	sig, err := w.Signer.Sign(ctx, alg, input)
	if err == nil && w.spoil {
		sig[len(sig)-1] ^= 1
	}
	return sig, err
}

// vouching is wrapped saying its signatures check when what it wraps does.
type vouching struct{ wrapped }

func (v *vouching) SignaturesChecked() bool { return SignaturesChecked(v.Signer) }

func TestSignaturesChecked(t *testing.T) {
	for _, c := range []struct {
		name string
		s    jwk.Signer
		want bool
	}{
		{"a local signer", testSigner, true},
		{"a wrapper that says nothing", &wrapped{Signer: testSigner}, false},
		{"a wrapper that vouches for a local signer", &vouching{wrapped{Signer: testSigner}}, true},
		{"a wrapper vouching for a wrapper that says nothing", &vouching{wrapped{Signer: &wrapped{Signer: testSigner}}}, false},
	} {
		if got := SignaturesChecked(c.s); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestSignCheckedChecksWhatItIsNotVouchedFor: a signer that does not vouch
// for its signatures has each checked, so a spoiled one is refused; its
// good ones are written.
func TestSignCheckedChecksWhatItIsNotVouchedFor(t *testing.T) {
	ctx := context.Background()
	if _, err := SignChecked(ctx, Stub, stubContent(), &wrapped{Signer: testSigner, spoil: true}); err == nil {
		t.Fatal("a spoiled signature from a signer that does not vouch for it was written")
	}
	s, err := SignChecked(ctx, Stub, stubContent(), &wrapped{Signer: testSigner})
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyHybrid(s.Record(), testSigner.Keys()); err != nil {
		t.Fatal(err)
	}
}

// TestSignedEnvelope: the envelope built once is the canonical text of the
// record's value, and Parse reads it back as the same record.
func TestSignedEnvelope(t *testing.T) {
	for _, kind := range []Kind{Stub, Countersignature} {
		content := stubContent()
		if kind == Countersignature {
			content = map[string]any{"type": "provared.countersignature.v0", "stub": "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE", "when": "2026-01-02T03:04:05Z"}
		}
		s, err := SignChecked(context.Background(), kind, content, testSigner)
		if err != nil {
			t.Fatal(err)
		}
		got := s.AppendEnvelope([]byte("x"))
		want := append([]byte("x"), canon.MustMarshal(s.Record().Value())...)
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: envelope\n%s\nwant\n%s", kind, got, want)
		}
		v, err := canon.Parse(got[1:])
		if err != nil {
			t.Fatal(err)
		}
		back, err := Parse(v, kind)
		if err != nil {
			t.Fatal(err)
		}
		if back.Fingerprint != s.Fingerprint() || s.Kind() != kind || !s.Keys().Equal(testSigner.Keys()) {
			t.Fatalf("%s: read back as %s", kind, back.Fingerprint)
		}
	}
}

// TestSignedRecordIsACopy: changing the record Record hands out changes
// nothing the book is given.
func TestSignedRecordIsACopy(t *testing.T) {
	s, err := SignChecked(context.Background(), Stub, stubContent(), testSigner)
	if err != nil {
		t.Fatal(err)
	}
	before := s.AppendEnvelope(nil)
	r := s.Record()
	r.Payload = "AAAA"
	r.Signatures[0].Signature = "AAAA"
	r.ContentText[0] = 'x'
	again := s.Record()
	if again.Payload == "AAAA" || again.Signatures[0].Signature == "AAAA" || again.ContentText[0] == 'x' || !bytes.Equal(before, s.AppendEnvelope(nil)) {
		t.Fatal("a change to the copy reached the signed record")
	}
	var zero Signed
	if !zero.IsZero() || zero.Record() != nil || zero.Fingerprint() != "" || zero.AppendEnvelope(nil) != nil {
		t.Fatal("a zero Signed holds something")
	}
}

// TestUTF16Len: the length in UTF-16 code units, ASCII read eight bytes at
// a time, is the length unicode/utf16 gives, wherever the first
// non-ASCII character falls.
func TestUTF16Len(t *testing.T) {
	for _, tail := range []string{"", "é", "\U0001F600", "a\u2028b"} {
		for n := range 20 {
			s := strings.Repeat("a", n) + tail + strings.Repeat("b", n%9)
			if got, want := utf16Len(s), len(utf16.Encode([]rune(s))); got != want {
				t.Errorf("%q: %d, want %d", s, got, want)
			}
		}
	}
}

// TestParseDeferred: a signature that is not base64url passes
// ParseDeferred and fails when its bytes are asked for; Parse refuses it.
func TestParseDeferred(t *testing.T) {
	s, err := SignChecked(context.Background(), Stub, stubContent(), testSigner)
	if err != nil {
		t.Fatal(err)
	}
	v := s.Record().Value()
	entry := v["signatures"].([]any)[1].(map[string]any)
	entry["signature"] = entry["signature"].(string)[:8] + "="
	if _, err := Parse(v, Stub); err == nil {
		t.Fatal("Parse took a signature that is not base64url")
	}
	r, err := ParseDeferred(v, Stub)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Signatures[1].Bytes(); err == nil {
		t.Fatal("the signature decoded")
	}
	if b, err := r.Signatures[0].Bytes(); err != nil || len(b) != 64 {
		t.Fatalf("the Ed25519 signature: %d bytes, %v", len(b), err)
	}
}

// TestSizeOver: settling the size by byte lengths first gives Size's
// answer, for texts of one, two, three and four UTF-8 bytes a character,
// on both sides of the limit.
func TestSizeOver(t *testing.T) {
	for _, ch := range []string{"a", "é", "\u2028", "\U0001F600"} {
		for _, units := range []int{MaxRecordSize - 2, MaxRecordSize - 1, MaxRecordSize, MaxRecordSize + 1, MaxRecordSize + 2} {
			per := len(utf16.Encode([]rune(ch)))
			text := strings.Repeat(ch, units/per) + strings.Repeat("a", units%per)
			v := map[string]any{"payload": text, "signatures": []any{map[string]any{"protected": "", "signature": ""}}}
			if got, want := sizeOver(v, MaxRecordSize), Size(v) > MaxRecordSize; got != want {
				t.Errorf("%q × %d units: sizeOver %v, Size %d", ch, units, got, Size(v))
			}
		}
	}
}

// FuzzShortNameAndUnit: the byte-by-byte forms accept exactly what their
// regular expressions accept.
func FuzzShortNameAndUnit(f *testing.F) {
	for _, s := range []string{"", "a", "tool.a", "-a", "a-", "A", "GBP", "gbp", "a..b", strings.Repeat("a", 64), strings.Repeat("a", 65), "é", "a b", "_x", "x_", "0"} {
		f.Add(s)
	}
	nameRE := regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)
	unitRE := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,15}$`)
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := IsShortName(s), nameRE.MatchString(s); got != want {
			t.Errorf("IsShortName(%q) = %v, the expression says %v", s, got, want)
		}
		if got, want := IsUnit(s), unitRE.MatchString(s); got != want {
			t.Errorf("IsUnit(%q) = %v, the expression says %v", s, got, want)
		}
	})
}
