package boot

import (
	"testing"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
)

// FuzzDecodeEnvelope: a record file is read into a canonical value or
// refused; what is read marshals canonically and reads back the same.
func FuzzDecodeEnvelope(f *testing.F) {
	for _, s := range []string{`{"payload":"eyJ9","signatures":[{"protected":"x","signature":"y"}]}`, `{"a":1}`, `{"a":-1}`, `{"a":1.5}`, `[1,true]`, `{} {}`, ` {"a" : [ "b" ] } `} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := decodeEnvelope([]byte(s))
		if err != nil {
			return
		}
		b, err := canon.Marshal(v)
		if err != nil {
			return // deeper than canonical JSON allows, or not well-formed Unicode
		}
		back, err := canon.Parse(b)
		if err != nil {
			t.Fatalf("canonical bytes %s do not parse: %v", b, err)
		}
		if b2 := canon.MustMarshal(back); string(b2) != string(b) {
			t.Fatalf("round trip %s != %s", b2, b)
		}
	})
}
