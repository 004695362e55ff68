package seal

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/receipts/tree"
)

func TestSealContentsVectors(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("../../testdata/provared-vectors", "seal-contents.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Function string `json:"function"`
		Cases    []struct {
			Name     string `json:"name"`
			Content  any    `json:"content"`
			Expected struct {
				Ok      *bool `json:"ok"`
				Refused *struct {
					Code string `json:"code"`
				} `json:"refused"`
			} `json:"expected"`
		} `json:"cases"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&f); err != nil || f.Function != "validateSealContent" {
		t.Fatalf("seal-contents.json: %v %q", err, f.Function)
	}
	for _, c := range f.Cases {
		err := record.ValidateSeal(canon.ReadBack(numbers(c.Content)))
		if c.Expected.Refused != nil {
			if problem.Code(err) != c.Expected.Refused.Code {
				t.Errorf("%s: %v, want %s", c.Name, err, c.Expected.Refused.Code)
			}
		} else if err != nil {
			t.Errorf("%s: %v", c.Name, err)
		}
	}
	t.Logf("seal-contents.json: %d cases", len(f.Cases))
}

// numbers turns json.Number into int64, as canonical values hold them.
func numbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, y := range x {
			x[k] = numbers(y)
		}
	case []any:
		for i, y := range x {
			x[i] = numbers(y)
		}
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
	}
	return v
}

var (
	fixtureOnce sync.Once
	fixture     struct {
		signer *LocalSigner
		sealed *Sealed
		err    error
	}
)

// testSeal signs one seal once for the tests (SLH-DSA is slow).
func testSeal(t testing.TB) (*LocalSigner, *Sealed) {
	t.Helper()
	fixtureOnce.Do(func() {
		s, err := NewLocalSigner(bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32), bytes.Repeat([]byte{3}, 96))
		if err != nil {
			fixture.err = err
			return
		}
		p, err := Prepare(Fields{ID: "AAECAwQFBgcICQoLDA0ODw", Name: "test recorder", Keys: s.Keys(), Size: 3,
			Root: tree.Root([][]byte{[]byte("a"), []byte("b"), []byte("c")}), When: time.Date(2026, 10, 5, 12, 0, 0, 0, time.UTC)})
		if err != nil {
			fixture.err = err
			return
		}
		fixture.signer = s
		fixture.sealed, fixture.err = p.Sign(context.Background(), s)
		if fixture.err == nil && fixture.sealed.Fingerprint() != p.Fingerprint() {
			fixture.err = fmt.Errorf("the prepared seal's fingerprint %s is not the signed seal's %s", p.Fingerprint(), fixture.sealed.Fingerprint())
		}
	})
	if fixture.err != nil {
		t.Fatal(fixture.err)
	}
	return fixture.signer, fixture.sealed
}

func TestSignAndRead(t *testing.T) {
	s, sealed := testSeal(t)
	if !CheckSignatures(sealed.Record, s.Keys()) {
		t.Fatal("the seal's signatures do not check")
	}
	if len(sealed.Record.Signatures) != 3 {
		t.Fatalf("%d signatures", len(sealed.Record.Signatures))
	}
	line, err := sealed.Line([][]byte{[]byte("token one"), []byte("token two")})
	if err != nil {
		t.Fatal(err)
	}
	v, err := canon.Parse(line)
	if err != nil {
		t.Fatalf("the line is not canonical: %v", err)
	}
	l, err := ParseLine(v.(map[string]any))
	if err != nil {
		t.Fatal(err)
	}
	if l.Size() != 3 || l.Previous() != "" || l.Sealer() != s.Keys().Fingerprint() || len(l.Stamps) != 2 || string(l.Stamps[1].Token) != "token two" {
		t.Fatalf("read back: size %d previous %q stamps %d", l.Size(), l.Previous(), len(l.Stamps))
	}
	if !l.When().Equal(time.Date(2026, 10, 5, 12, 0, 0, 0, time.UTC)) || l.Root() != canon.B64(func() []byte { r := tree.Root([][]byte{[]byte("a"), []byte("b"), []byte("c")}); return r[:] }()) {
		t.Fatal("when or root read back wrong")
	}
	if len(line) > 131072 {
		t.Fatalf("a seal line of %d bytes", len(line))
	}
	// Each signature changed in turn, or another recorder's keys: it no longer checks.
	for i := range sealed.Record.Signatures {
		rec := *sealed.Record
		rec.Signatures = append([]record.Signature(nil), rec.Signatures...)
		sig, _ := rec.Signatures[i].Bytes()
		bad := append([]byte(nil), sig...)
		bad[len(bad)/2] ^= 1
		rec.Signatures[i] = record.Signature{Protected: rec.Signatures[i].Protected, Alg: rec.Signatures[i].Alg, Signature: canon.B64(bad)}
		if CheckSignatures(&rec, s.Keys()) {
			t.Errorf("signature %d changed: still checks", i)
		}
	}
	other, _ := jwk.NewLocalSigner(bytes.Repeat([]byte{9}, 32), bytes.Repeat([]byte{2}, 32))
	keys := s.Keys()
	keys.Ed25519 = other.Keys().Ed25519
	if CheckSignatures(sealed.Record, keys) {
		t.Error("another Ed25519 key: still checks")
	}
}

func TestPrepareRefuses(t *testing.T) {
	s, _ := testSeal(t)
	good := Fields{Name: "r", Keys: s.Keys(), Size: 1, When: time.Now()}
	if _, err := Prepare(good); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]Fields{
		"no entries":     {Name: "r", Keys: s.Keys(), Size: 0, When: time.Now()},
		"no name":        {Keys: s.Keys(), Size: 1, When: time.Now()},
		"no keys":        {Name: "r", Size: 1, When: time.Now()},
		"a bad id":       {ID: "AAAA", Name: "r", Keys: s.Keys(), Size: 1, When: time.Now()},
		"a bad previous": {Name: "r", Keys: s.Keys(), Size: 1, When: time.Now(), Previous: "x"},
	} {
		if _, err := Prepare(f); err == nil {
			t.Errorf("%s: prepared", name)
		}
	}
	// A signer with other keys does not sign a seal that names these.
	other, err := NewLocalSigner(bytes.Repeat([]byte{4}, 32), bytes.Repeat([]byte{2}, 32), bytes.Repeat([]byte{3}, 96))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := Prepare(good)
	if _, err := p.Sign(context.Background(), other); err == nil {
		t.Error("signed with another recorder's keys")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Sign(ctx, s); err == nil {
		t.Error("signed after its context ended")
	}
}

func TestDecodeStamps(t *testing.T) {
	tok := canon.B64([]byte("a token"))
	for _, tc := range []struct {
		name string
		v    any
		code string
	}{
		{"one token", []any{tok}, ""},
		{"a block stamp", []any{map[string]any{"block": canon.B64(make([]byte, 80)), "proof": canon.B64([]byte{0})}}, ""},
		{"an empty list", []any{}, "bad-field"},
		{"five", []any{tok, tok + "A", tok + "B", tok + "C", tok + "D"}, "bad-field"},
		{"twice", []any{tok, tok}, "bad-field"},
		{"not a list", tok, "bad-field"},
		{"a number", []any{int64(1)}, "bad-field"},
		{"empty text", []any{""}, "bad-field"},
		{"not base64url", []any{"a+b"}, "bad-base64url"},
		{"too long", []any{canon.B64(make([]byte, 12289))}, "bad-field"},
		{"a block stamp with more", []any{map[string]any{"block": "AA", "proof": "AA", "x": "AA"}}, "bad-field"},
	} {
		_, err := DecodeStamps(tc.v)
		if got := problem.Code(err); (tc.code == "" && err != nil) || (tc.code != "" && got != tc.code) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.code)
		}
	}
}

// FuzzParseLine: a seal line of any bytes is refused or read; one read
// writes back (Line) to the same bytes when it came with stamps of text.
func FuzzParseLine(f *testing.F) {
	_, sealed := testSeal(f)
	line, err := sealed.Line([][]byte{[]byte("t")})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(line)
	f.Add([]byte(`{"seal":{"payload":"","signatures":[]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := canon.Parse(b)
		if err != nil {
			return
		}
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		l, err := ParseLine(m)
		if err != nil {
			return
		}
		if l.HasStamps && len(l.Stamps) == 0 {
			t.Fatal("stamps read as none")
		}
	})
}

// BenchmarkSealSign is a seal's three signatures against one Ed25519
// signature over the same input, the floor.
func BenchmarkSealSign(b *testing.B) {
	s, err := NewLocalSigner(bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32), bytes.Repeat([]byte{3}, 96))
	if err != nil {
		b.Fatal(err)
	}
	p, err := Prepare(Fields{Name: "bench", Keys: s.Keys(), Size: 90000, When: time.Now()})
	if err != nil {
		b.Fatal(err)
	}
	input := []byte(record.Seal.ProtectedHeaders()[0] + "." + canon.B64(p.ContentText()))
	ctx := context.Background()
	b.Run("ed25519-floor", func(b *testing.B) {
		for b.Loop() {
			_, _ = s.Sign(ctx, jwk.Ed25519, input)
		}
	})
	b.Run("seal", func(b *testing.B) {
		for b.Loop() {
			if _, err := p.Sign(ctx, s); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func TestSealStampsVectors(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("../../testdata/provared-vectors", "seal-stamps.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Function string `json:"function"`
		Cases    []struct {
			Name     string `json:"name"`
			Stamps   any    `json:"stamps"`
			Expected struct {
				Ok []struct {
					Kind   string `json:"kind"`
					Token  string `json:"token"`
					Header string `json:"header"`
					Proof  string `json:"proof"`
				} `json:"ok"`
				Refused *struct {
					Code string `json:"code"`
				} `json:"refused"`
			} `json:"expected"`
		} `json:"cases"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&f); err != nil || f.Function != "decodeStamps" || len(f.Cases) == 0 {
		t.Fatalf("seal-stamps.json: %v %q", err, f.Function)
	}
	for _, c := range f.Cases {
		got, err := DecodeStamps(numbers(c.Stamps))
		if c.Expected.Refused != nil {
			if problem.Code(err) != c.Expected.Refused.Code {
				t.Errorf("%s: %v, want %s", c.Name, err, c.Expected.Refused.Code)
			}
			continue
		}
		if err != nil || len(got) != len(c.Expected.Ok) {
			t.Errorf("%s: %d stamps, %v", c.Name, len(got), err)
			continue
		}
		for i, w := range c.Expected.Ok {
			g := got[i]
			if g.Kind != w.Kind || hex.EncodeToString(g.Token) != w.Token || hex.EncodeToString(g.Header) != w.Header || hex.EncodeToString(g.Proof) != w.Proof {
				t.Errorf("%s: stamp %d: %+v, want %+v", c.Name, i, g, w)
			}
		}
	}
	t.Logf("seal-stamps.json: %d cases", len(f.Cases))
}
