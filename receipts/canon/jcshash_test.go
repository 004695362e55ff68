package canon

import (
	"bytes"
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"
)

// jcsHashCases are texts the streaming hasher must take itself (not leave
// to the library): the golden inputs and the JCSAccepts cases.
func jcsHashCases(t *testing.T) []string {
	t.Helper()
	ins, err := filepath.Glob("testdata/jcs/*.in.json")
	if err != nil || len(ins) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	var out []string
	for _, in := range ins {
		raw, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(raw))
	}
	return append(out,
		strings.Repeat("[", 64)+`"x"`+strings.Repeat("]", 64),
		strings.Repeat("[", 64)+` { } `+strings.Repeat("]", 64),
		`["\"[[[["]`, `"\ud83d\ude00"`, `["\uD83D\uDE00",1]`, `"\\ud800"`, `"\/"`, ` 1.50 `, `-0.0`, `null`,
		`{"b":[1,2.5,0,true,null,"x"],"a":{"d":"é","c":1e21}}`, `"\u0000\u001f\u007f\b\f\n\r\t"`,
		`{"`+"\U0001F600"+`":1,"`+"\uffff"+`":2,"":[],"\u0000":{}}`, `[1e-7, 123456789012345680000, 5e-324]`,
		`{"a":{"c":{"e":1,"d":2},"b":[{"z":1,"y":2}]}}`, "\t[ true ,false\r\n]\n",
	)
}

// TestJCSHashAgreesWithTheLibrary: on every case the streaming hasher
// takes the text itself and gives the SHA-256 of the library's form.
func TestJCSHashAgreesWithTheLibrary(t *testing.T) {
	for _, text := range jcsHashCases(t) {
		want, err := JCS([]byte(text))
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		sum, err := jcsHash([]byte(text))
		if err != nil {
			t.Fatalf("the hasher does not take %q", text)
		}
		if got := sha256.Sum256(want); !bytes.Equal(sum, got[:]) {
			t.Errorf("%q: the hash differs from that of %s", text, want)
		}
	}
}

// TestJCSHashRefuses: what the library refuses the hasher does not take,
// and JCSFingerprint gives the library's error.
func TestJCSHashRefuses(t *testing.T) {
	for _, text := range []string{
		`{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `[{"x":{"b":1,"b":1}}]`, `NaN`, `[Infinity]`, `1e400`,
		`"\ud800x"`, `"\udc00"`, `"\ud800\u0041"`, "\"\xff\"", `[1,]`, `{"a":1,}`, `[1 2]`, `01`, `1.`, `+1`,
		`"a` + "\n" + `"`, `"\x"`, `tru`, `null null`, `{"a" 1}`, `{1:2}`, `[`, `"`, `é`, `[1]x`,
	} {
		if _, err := jcsHash([]byte(text)); err == nil {
			t.Errorf("the hasher took %q", text)
		}
		_, want := JCS([]byte(text))
		_, got := JCSFingerprint([]byte(text))
		if want == nil || got == nil || got.Error() != want.Error() {
			t.Errorf("%q: JCSFingerprint says %v, JCS %v", text, got, want)
		}
	}
}

// FuzzJCSHash: where the streaming hasher takes a text, the library takes
// it too and its form has the same SHA-256; and JCSFingerprint agrees with
// Fingerprint(JCS) on everything.
func FuzzJCSHash(f *testing.F) {
	for _, s := range []string{
		`{"b":[1,2.5,0,true,null,"x"],"a":{"d":"é","c":1e21}}`, `-0`, `NaN`, `"\ud800"`, `{"a":1,"a":2}`,
		`[1e-7, 123456789012345680000, 5e-324]`, `"\u2028"`, `{"` + "\U0001F600" + `":1,"` + "\uffff" + `":2}`,
		strings.Repeat("[", 65) + strings.Repeat("]", 65), `  {"a" : [ ] }  `, `1E400`, `"\u0001\t"`,
		`{"a":{"c":1,"b":2},"\u00e9":[{}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if sum, err := jcsHash(raw); err == nil && len(raw) > 0 {
			out, err := jcs.Transform(raw)
			if err != nil {
				t.Fatalf("the hasher took %q, which the library refuses: %v", raw, err)
			}
			if got := sha256.Sum256(out); !bytes.Equal(sum, got[:]) {
				t.Fatalf("%q: the hash differs from that of the library's %q", raw, out)
			}
		}
		fp, err := JCSFingerprint(raw)
		out, jerr := JCS(raw)
		switch {
		case (err == nil) != (jerr == nil):
			t.Fatalf("%q: JCSFingerprint says %v, JCS %v", raw, err, jerr)
		case err != nil && err.Error() != jerr.Error():
			t.Fatalf("%q: JCSFingerprint says %v, JCS %v", raw, err, jerr)
		case err == nil && fp != Fingerprint(out):
			t.Fatalf("%q: JCSFingerprint %s, Fingerprint(JCS) %s", raw, fp, Fingerprint(out))
		}
	})
}

// BenchmarkJCSFingerprintLarge: one string of 16 MiB, hashed as it is read.
func BenchmarkJCSFingerprintLarge(b *testing.B) {
	raw := []byte(`{"m":"x","pad":"` + strings.Repeat("p", 16<<20) + `"}`)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := JCSFingerprint(raw); err != nil {
			b.Fatal(err)
		}
	}
}
