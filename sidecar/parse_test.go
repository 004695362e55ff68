package sidecar

import (
	"encoding/json"
	"strings"
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

func TestStubsByCall(t *testing.T) {
	content := `{"details":[{"name":"executor.call","sha256":"AAA"},{"name":"x","sha256":"BBB"}],"type":"provared.stub.v0"}`
	line, _ := json.Marshal(map[string]any{"stub": map[string]any{"payload": canon.B64([]byte(content))}})
	text := "not json\n" + `{"slip":{"payload":"eyJ9"}}` + "\n" + string(line) + "\n" + `{"stub":{"payload":"!!"}}` + "\n"
	got, err := stubsByCallIn(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got["AAA"] != canon.Fingerprint([]byte(content)) {
		t.Errorf("got %v", got)
	}
}

// FuzzStubsByCall: any book text is read without failing, and every entry
// maps a fingerprint-named call to a fingerprint.
func FuzzStubsByCall(f *testing.F) {
	f.Add("{\"stub\":{\"payload\":\"eyJkZXRhaWxzIjpbXX0\"}}\n")
	f.Add("\n\n{}\n")
	f.Fuzz(func(t *testing.T, text string) {
		got, err := stubsByCallIn(strings.NewReader(text))
		if err != nil {
			return // a line longer than a book line may be
		}
		for _, stub := range got {
			if !canon.IsFingerprint(stub) {
				t.Fatalf("stub fingerprint %q", stub)
			}
		}
	})
}
