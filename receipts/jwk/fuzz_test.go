package jwk

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

var allAlgs = []string{Ed25519, MLDSA87, SLHDSA256, ES256, RS256}

// FuzzCheckKey feeds arbitrary JSON to the key reader. It must never panic;
// an accepted key keeps exactly the members read, has a 43-character
// thumbprint, and a key set read back from Value is equal to itself.
func FuzzCheckKey(f *testing.F) {
	keys := readVectors(f, "keys.json")
	for _, raw := range keys.Cases {
		var c struct {
			Key json.RawMessage `json:"key"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			f.Fatal(err)
		}
		f.Add([]byte(c.Key))
	}
	s, err := NewLocalSigner(bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32))
	if err != nil {
		f.Fatal(err)
	}
	set, err := json.Marshal(s.Keys().Value())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(set)
	f.Add([]byte(`[{"alg":"Ed25519"},null]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d := json.NewDecoder(bytes.NewReader(data))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			return
		}
		v = numbers(v)
		if k, err := CheckKey(v, allAlgs...); err == nil {
			if !reflect.DeepEqual(any(k.JWK), v) || len(k.Thumbprint) != 43 {
				t.Fatalf("accepted key changed or has a bad thumbprint")
			}
			_ = k.Verify(data, data)
		}
		if ks, err := CheckKeySet(v); err == nil {
			if !reflect.DeepEqual(any(ks.Value()), v) || !ks.Equal(ks) || len(ks.Fingerprint()) != 43 {
				t.Fatalf("accepted key set changed")
			}
		}
	})
}
