package contentrules

import (
	"encoding/json"
	"testing"
)

// FuzzReadJSON compares the strict reader with encoding/json: what it
// reads is JSON, and JSON it refuses is refused for one of its own rules
// (a name twice, a big number, a lone surrogate), never as "not JSON".
func FuzzReadJSON(f *testing.F) {
	for _, s := range []string{
		`{"a":1}`, `{"a":1,"a":2}`, `{"a":1,"A":2}`, `[9007199254740992]`, `1e300`, `"\ud800"`, `"\ud83d\ude00"`,
		` {"k" : [ true, false, null, -0.5e-3 ] } `, `{"Straße":1,"STRASSE":2}`, "\"\xff\"", `[01]`, `"\u00zz"`, `{}x`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		v, err := readJSON(text, true, 64)
		valid := json.Valid(text)
		if err == nil {
			if !valid {
				t.Fatalf("read %q, which encoding/json says is not JSON", text)
			}
			if !equalJSON(v, v) {
				t.Fatal("a value is not equal to itself")
			}
			return
		}
		if valid && err.fault == faultNotJSON {
			t.Fatalf("refused JSON %q as not JSON", text)
		}
	})
}
