package stamp

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
)

type stampCase struct {
	Name    string `json:"name"`
	Token   string `json:"token"`
	Stamped string `json:"stamped"`
	Options struct {
		Trusted []string `json:"trusted"`
		Without []string `json:"without"`
	} `json:"options"`
	Change *struct {
		Flip []int `json:"flip"`
	} `json:"change"`
	Expected struct {
		Ok      *Result `json:"ok"`
		Refused *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"refused"`
	} `json:"expected"`
}

func loadStamps(t testing.TB, name string) []stampCase {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("../../testdata/provared-vectors", name))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Function string      `json:"function"`
		Cases    []stampCase `json:"cases"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	if f.Function != "checkStamp" || len(f.Cases) == 0 {
		t.Fatalf("%s: %q, %d cases", name, f.Function, len(f.Cases))
	}
	return f.Cases
}

func b64(t testing.TB, s string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func runStampCases(t *testing.T, name string) {
	cases := loadStamps(t, name)
	for _, c := range cases {
		token := b64(t, c.Token)
		if c.Change != nil {
			token[c.Change.Flip[0]] ^= byte(c.Change.Flip[1])
		}
		got, err := Check(token, b64(t, c.Stamped), Options{Trusted: c.Options.Trusted, Without: c.Options.Without})
		if r := c.Expected.Refused; r != nil {
			pe, ok := errors.AsType[*problem.Error](err)
			if !ok || pe.Code != r.Code {
				t.Errorf("%s: %v, want %s (%s)", c.Name, err, r.Code, r.Message)
			} else if r.Code == CodeBadData && pe.Message != r.Message {
				// The layout's words are the reference's, kept: a check that
				// our reader fails at the same place.
				t.Errorf("%s: %q, want %q", c.Name, pe.Message, r.Message)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		if got != *c.Expected.Ok {
			t.Errorf("%s: %+v, want %+v", c.Name, got, *c.Expected.Ok)
		}
	}
	t.Logf("%s: %d cases", name, len(cases))
}

func TestStampsVectors(t *testing.T)       { runStampCases(t, "stamps.json") }
func TestFlipsEd25519Vectors(t *testing.T) { runStampCases(t, "stamps-flips-ed25519.json") }
func TestFlipsRSAVectors(t *testing.T)     { runStampCases(t, "stamps-flips-rsa.json") }

// Every byte of every sound token in the vectors, changed by 1 and by 128
// (as the flips files do): the token is refused, or it states exactly
// what it stated before. A change never makes it say another time, another
// fingerprint or another service.
func TestEveryFlipRefusedOrSame(t *testing.T) {
	var cases []stampCase
	for _, name := range []string{"stamps.json", "stamps-flips-ed25519.json", "stamps-flips-rsa.json", "stamps-strict-keys.json"} {
		for _, c := range loadStamps(t, name) {
			if c.Expected.Ok != nil && c.Change == nil {
				cases = append(cases, c)
			}
		}
	}
	for _, c := range cases {
		token := b64(t, c.Token)
		stamped := b64(t, c.Stamped)
		opts := Options{Trusted: c.Options.Trusted}
		base, err := Check(token, stamped, opts)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		same, refused := 0, 0
		for i := range token {
			for _, x := range []byte{1, 128} {
				flipped := append([]byte(nil), token...)
				flipped[i] ^= x
				got, err := Check(flipped, stamped, opts)
				switch {
				case err != nil:
					if code := problem.Code(err); code != CodeBadData && code != CodeInvalid && code != CodeWrongData {
						t.Fatalf("%s: byte %d ^ %d: code %s", c.Name, i, x, code)
					}
					refused++
				case got == base:
					same++
				default:
					t.Fatalf("%s: byte %d ^ %d: states %+v, before %+v", c.Name, i, x, got, base)
				}
			}
		}
		t.Logf("%s: %d changes refused, %d read the same", c.Name, refused, same)
	}
}

func TestWrongDataAndTrust(t *testing.T) {
	c := loadStamps(t, "stamps.json")[0]
	token, stamped := b64(t, c.Token), b64(t, c.Stamped)
	other := append([]byte(nil), stamped...)
	other[31] ^= 1
	if _, err := Check(token, other, Options{}); problem.Code(err) != CodeWrongData {
		t.Errorf("another fingerprint: %v", err)
	}
	if _, err := Check(token, stamped[:31], Options{}); problem.Code(err) != CodeWrongData {
		t.Errorf("a shorter fingerprint: %v", err)
	}
	got, err := Check(token, stamped, Options{Trusted: []string{"someone else"}})
	if err != nil || got.State != StateUntrusted || got.Authority != c.Options.Trusted[0] || got.When != "2026-10-05T12:00:00Z" {
		t.Errorf("untrusted: %+v %v", got, err)
	}
	got, err = Check(token, stamped, Options{Trusted: c.Options.Trusted, Without: []string{MethodECDSA}})
	if err != nil || got != (Result{State: StateUnavailable}) {
		t.Errorf("without ECDSA: %+v %v", got, err)
	}
	if _, err := Check(nil, stamped, Options{}); problem.Code(err) != CodeBadData {
		t.Errorf("no token: %v", err)
	}
	if _, err := Check(make([]byte, MaxTokenBytes+1), stamped, Options{}); problem.Code(err) != CodeBadData {
		t.Errorf("too large: %v", err)
	}
}

// FuzzCheck: any bytes, as a token, are refused with one of the three codes
// or read; none panics.
func FuzzCheck(f *testing.F) {
	for _, name := range []string{"stamps.json", "stamps-flips-ed25519.json"} {
		for _, c := range loadStamps(f, name) {
			f.Add(b64(f, c.Token))
		}
	}
	stamped := b64(f, "crgNv0PmNg3QyhHCGnK2wKtA4n40VEmf0W0YdaLKlOg")
	f.Fuzz(func(t *testing.T, token []byte) {
		res, err := Check(token, stamped, Options{})
		if err != nil {
			if code := problem.Code(err); code != CodeBadData && code != CodeInvalid && code != CodeWrongData {
				t.Fatalf("code %s: %v", code, err)
			}
			return
		}
		if res.State != StateUntrusted || res.Authority == "" {
			t.Fatalf("read as %+v with nothing trusted", res)
		}
	})
}

func TestStrictKeysVectors(t *testing.T) { runStampCases(t, "stamps-strict-keys.json") }

// BenchmarkCheck is one token's whole check (strict reading, the
// attributes, the signature) for each signing method, against one Ed25519
// signature check, the floor.
func BenchmarkCheck(b *testing.B) {
	cases := map[string]stampCase{}
	for _, c := range loadStamps(b, "stamps.json") {
		switch c.Name {
		case "ECDSA P-256 with SHA-256", "Ed25519", "RSA 2048 with SHA-256":
			cases[c.Name] = c
		}
	}
	pub, priv, _ := ed25519.GenerateKey(nil)
	msg := []byte("a signed attribute set of about this size, a few hundred bytes long ...")
	sig := ed25519.Sign(priv, msg)
	b.Run("ed25519-verify-floor", func(b *testing.B) {
		for b.Loop() {
			ed25519.Verify(pub, msg, sig)
		}
	})
	for name, c := range cases {
		token, stamped := b64(b, c.Token), b64(b, c.Stamped)
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Check(token, stamped, Options{Trusted: c.Options.Trusted}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
