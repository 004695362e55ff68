package slip

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
)

// slipExpected is the reference's SlipCheck as slips.json states it.
type slipExpected struct {
	Kind        string  `json:"kind"`
	Fingerprint *string `json:"fingerprint"`
	Problems    []refusal
	Notes       []string `json:"notes"`
	Signature   struct {
		Method string  `json:"method"`
		Alg    *string `json:"alg"`
		State  string  `json:"state"`
	} `json:"signature"`
	IssuerKey          *string         `json:"issuerKey"`
	Content            json.RawMessage `json:"content"`
	Covered            []string        `json:"covered"`
	DisclosureProblems []refusal       `json:"disclosureProblems"`
}

type slipCase struct {
	Name        string          `json:"name"`
	Record      json.RawMessage `json:"record"`
	Options     json.RawMessage `json:"options"`
	Disclosures json.RawMessage `json:"disclosures"`
	Expected    expected        `json:"expected"`
}

// optionsFrom turns a case's options into Options, as the reference reads
// them: only a list counts as a list.
func optionsFrom(t *testing.T, c slipCase) Options {
	var o Options
	if len(c.Options) > 0 {
		m, _ := jsonValue(t, c.Options).(map[string]any)
		if l, ok := m["issuerKeys"].([]any); ok {
			o.IssuerKeys = []string{}
			for _, k := range l {
				s, _ := k.(string)
				o.IssuerKeys = append(o.IssuerKeys, s)
			}
		}
		if l, ok := m["withoutMethods"].([]any); ok {
			for _, k := range l {
				s, _ := k.(string)
				o.WithoutMethods = append(o.WithoutMethods, s)
			}
		}
		if d, ok := m["disclosures"].(map[string]any); ok {
			o.Disclosures = d
		}
	}
	if len(c.Disclosures) > 0 {
		o.Attached = jsonValue(t, c.Disclosures)
	}
	return o
}

func orEmpty(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func TestSlipVectors(t *testing.T) {
	cases := readVectors(t, "slips.json")
	if len(cases) != 170 {
		t.Errorf("slips.json holds %d cases, want 170", len(cases))
	}
	for i, raw := range cases {
		var c slipCase
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if c.Expected.OK == nil {
			t.Errorf("case %d %s: expected a result, the vectors give a refusal", i, c.Name)
			continue
		}
		var want slipExpected
		if err := json.Unmarshal(c.Expected.OK, &want); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		s, got := Check(jsonValue(t, c.Record), optionsFrom(t, c))
		name := c.Name

		if got.Kind != want.Kind || got.Fingerprint != orEmpty(want.Fingerprint) {
			t.Errorf("%d %s: kind/fingerprint %q %q, want %q %q", i, name, got.Kind, got.Fingerprint, want.Kind, orEmpty(want.Fingerprint))
		}
		wantCodes := []string{}
		for _, p := range want.Problems {
			wantCodes = append(wantCodes, p.Code)
		}
		if g := codes(got.Problems); !slices.Equal(g, wantCodes) {
			t.Errorf("%d %s: problems %v (%v), want %v", i, name, g, got.Problems, wantCodes)
		}
		if got.Signature.Method != want.Signature.Method || got.Signature.Alg != orEmpty(want.Signature.Alg) || got.Signature.State != want.Signature.State {
			t.Errorf("%d %s: signature %+v, want %+v", i, name, got.Signature, want.Signature)
		}
		if got.IssuerKey != orEmpty(want.IssuerKey) {
			t.Errorf("%d %s: issuerKey %q, want %q", i, name, got.IssuerKey, orEmpty(want.IssuerKey))
		}
		if len(got.Notes) != len(want.Notes) {
			t.Errorf("%d %s: notes %q, want %q", i, name, got.Notes, want.Notes)
		}
		if !slices.Equal(orNone(got.Covered), orNone(want.Covered)) {
			t.Errorf("%d %s: covered %v, want %v", i, name, got.Covered, want.Covered)
		}
		wantDP := []string{}
		for _, p := range want.DisclosureProblems {
			wantDP = append(wantDP, p.Code)
		}
		if g := codes(got.DisclosureProblems); !slices.Equal(g, wantDP) {
			t.Errorf("%d %s: disclosureProblems %v, want %v", i, name, g, wantDP)
		}
		wantContent := jsonValue(t, want.Content)
		if wantContent == nil {
			if got.Content != nil {
				t.Errorf("%d %s: content read, want none", i, name)
			}
		} else {
			g, err1 := canon.Marshal(got.Content)
			w, err2 := canon.Marshal(wantContent)
			if err1 != nil || err2 != nil || string(g) != string(w) {
				t.Errorf("%d %s: content differs (%v %v)\n got %.300s\nwant %.300s", i, name, err1, err2, g, w)
			}
		}
		if (s != nil) != (got.Content != nil) {
			t.Errorf("%d %s: slip returned %v with content %v", i, name, s != nil, got.Content != nil)
		}
		if s != nil && (s.Fingerprint != got.Fingerprint || s.Issuer.Key == nil || s.Record == nil) {
			t.Errorf("%d %s: parsed slip incomplete", i, name)
		}
	}
}

func orNone(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}
