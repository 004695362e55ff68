package der

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
)

type derCase struct {
	Name     string `json:"name"`
	Bytes    string `json:"bytes"`
	Expected struct {
		Ok      json.RawMessage `json:"ok"`
		Refused *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"refused"`
	} `json:"expected"`
}

func load(t *testing.T, name, function string) []derCase {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("../../testdata/provared-vectors", name))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Function string    `json:"function"`
		Cases    []derCase `json:"cases"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	if f.Function != function || len(f.Cases) == 0 {
		t.Fatalf("%s: %q, %d cases", name, f.Function, len(f.Cases))
	}
	return f.Cases
}

// refusedAs checks err against a case's refusal: the same code and, since
// these are our words too, the same message.
func refusedAs(t *testing.T, c derCase, err error) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: accepted, want %s", c.Name, c.Expected.Refused.Code)
		return
	}
	pe, ok := errors.AsType[*problem.Error](err)
	if !ok || pe.Code != c.Expected.Refused.Code || pe.Message != c.Expected.Refused.Message {
		t.Errorf("%s: %v, want %s: %s", c.Name, err, c.Expected.Refused.Code, c.Expected.Refused.Message)
	}
}

func TestStrictVectors(t *testing.T) {
	cases := load(t, "der-strict.json", "validateDer")
	for _, c := range cases {
		b, _ := hex.DecodeString(c.Bytes)
		e, err := Read(b, 0, len(b))
		if err == nil {
			err = Validate(b, e)
		}
		if c.Expected.Refused != nil {
			refusedAs(t, c, err)
		} else if err != nil {
			t.Errorf("%s: %v", c.Name, err)
		}
	}
	t.Logf("der-strict.json: %d cases", len(cases))
}

func TestTimesVectors(t *testing.T) {
	cases := load(t, "der-times.json", "timeOf")
	for _, c := range cases {
		b, _ := hex.DecodeString(c.Bytes)
		e, err := Read(b, 0, len(b))
		var ms int64
		if err == nil {
			ms, err = Time(b, e)
		}
		if c.Expected.Refused != nil {
			refusedAs(t, c, err)
			continue
		}
		var want int64
		if err := json.Unmarshal(c.Expected.Ok, &want); err != nil {
			t.Fatal(err)
		}
		if err != nil || ms != want {
			t.Errorf("%s: %d %v, want %d", c.Name, ms, err, want)
		}
	}
	t.Logf("der-times.json: %d cases", len(cases))
}

// The part budget: 4,000 parts in all, the outer one included.
func TestPartBudget(t *testing.T) {
	for _, tc := range []struct {
		inner int
		ok    bool
	}{{3999, true}, {4000, false}} {
		body := bytes.Repeat([]byte{0x05, 0x00}, tc.inner)
		n := len(body)
		b := append([]byte{0x30, 0x82, byte(n >> 8), byte(n)}, body...)
		e, err := Read(b, 0, len(b))
		if err != nil {
			t.Fatal(err)
		}
		if err := Validate(b, e); (err == nil) != tc.ok {
			t.Errorf("%d parts inside one: %v", tc.inner, err)
		}
	}
}

func TestReadRefusals(t *testing.T) {
	for _, tc := range []struct{ name, hex, code string }{
		{"cut short", "02", "it is cut short."},
		{"indefinite length", "3080", "it holds a length in a form that is not allowed."},
		{"five bytes of length", "30850000000001", "it holds a length in a form that is not allowed."},
		{"a long length for a short part", "3081050500050005000500", "it holds a length that is not in its shortest form."},
		{"a length with a leading zero", "308200850500", "it holds a length that is not in its shortest form."},
		{"longer than the text", "3005", "a part is longer than what holds it."},
		{"a long tag", "1f0100", "it holds a tag of a kind that is not used here."},
	} {
		b, _ := hex.DecodeString(tc.hex)
		_, err := Read(b, 0, len(b))
		pe, ok := errors.AsType[*problem.Error](err)
		if !ok || pe.Code != CodeBadData || pe.Message != "A time-stamp is not laid out as its standard sets out: "+tc.code {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

func TestECDSAToRaw(t *testing.T) {
	for _, tc := range []struct {
		name, der, raw string
	}{
		{"two small numbers", "3006020101020102", "00000000000000000000000000000000000000000000000000000000000000010000000000000000000000000000000000000000000000000000000000000002"},
		{"a padded high number", "30260221008000000000000000000000000000000000000000000000000000000000000000020101", "80000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000001"},
		{"a negative number", "3006020181020101", ""},
		{"a needless zero", "300702020001020101", ""},
		{"one number", "3003020101", ""},
		{"bytes after it", "300602010102010100", ""},
		{"a number too large", "30260221010000000000000000000000000000000000000000000000000000000000000000020101", ""},
	} {
		b, _ := hex.DecodeString(tc.der)
		got, err := ECDSAToRaw(b, 32)
		if tc.raw == "" {
			if err == nil {
				t.Errorf("%s: accepted", tc.name)
			}
			continue
		}
		if err != nil || hex.EncodeToString(got) != tc.raw {
			t.Errorf("%s: %x %v", tc.name, got, err)
		}
	}
}

// FuzzValidate: whatever the bytes, Read and Validate answer without
// panicking, and an element they accept lies within the text, its
// children filling it exactly.
func FuzzValidate(f *testing.F) {
	for _, s := range []string{"020105", "3003020101", "3106020101020102", "a00402020001", "3030302e302c302a30283026302430223020301e301c301a30183016301430123010300e300c300a30083006300430020500"} {
		b, _ := hex.DecodeString(s)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := Read(b, 0, len(b))
		if err != nil {
			return
		}
		if e.From != 0 || e.Start > e.End || e.End > len(b) {
			t.Fatalf("element %+v outside %d bytes", e, len(b))
		}
		if Validate(b, e) != nil {
			return
		}
		if e.Tag&0x20 != 0 {
			kids, err := Children(b, e, 1<<30)
			if err != nil {
				t.Fatalf("validated, but its children do not read: %v", err)
			}
			at := e.Start
			for _, k := range kids {
				if k.From != at {
					t.Fatalf("a gap before a child")
				}
				at = k.End
			}
			if at != e.End {
				t.Fatalf("children end at %d, the element at %d", at, e.End)
			}
		}
		if e.Tag == UTCTime || e.Tag == GeneralizedTime {
			_, _ = Time(b, e)
		}
		_, _ = ECDSAToRaw(b, 32)
	})
}
