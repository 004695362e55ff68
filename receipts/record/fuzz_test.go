package record

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzParse feeds arbitrary JSON to the envelope parser as every kind. It
// must never panic, and a record it accepts must give back, from Value, the
// very envelope value it read.
func FuzzParse(f *testing.F) {
	for _, k := range []Kind{Stub, Refusal} {
		content := stubContent()
		if k == Refusal {
			content = refusalContent()
		}
		r, err := Sign(context.Background(), k, content, testSigner)
		if err != nil {
			f.Fatal(err)
		}
		b, err := json.Marshal(r.Value())
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	recs := readVectors(f, "records.json")
	for _, raw := range recs.Cases {
		var c struct {
			Record json.RawMessage `json:"record"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			f.Fatal(err)
		}
		f.Add([]byte(c.Record))
	}
	for _, s := range []string{
		`{}`, `null`, `[]`, `"x"`, `{"payload":"","signatures":[]}`,
		`{"payload":"e30","signatures":[{"protected":"","signature":""}]}`,
		`{"payload":"e30","signatures":[{"header":{"authenticatorData":1,"clientDataJSON":[]},"protected":"eyJ0eXAiOiJ2bmQucHJvdmFyZWQuc2xpcC52MCtqc29uIiwiYWxnIjoicHJvdmEucmVkL3dlYmF1dGhuL3YwIn0","signature":""}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := json.NewDecoder(bytes.NewReader(data))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			return
		}
		v = numbers(v)
		for k := range kinds {
			r, err := Parse(v, k)
			if err != nil {
				continue
			}
			if !reflect.DeepEqual(r.Value(), v) {
				t.Fatalf("%s: Value differs from the envelope read", k)
			}
			if r.Kind != k || len(r.Signatures) != len(kinds[k].headers) {
				t.Fatalf("%s: accepted with %d signatures", k, len(r.Signatures))
			}
			for i := range r.Signatures {
				_ = r.SigningInput(i)
			}
		}
	})
}
