package passkey

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
)

// vectorCase is one case of the format's test vectors, with the inputs this
// package's files use.
type vectorCase struct {
	Name     string `json:"name"`
	Text     string `json:"text"`
	RPID     string `json:"rpId"`
	DER      string `json:"der"`
	Expected struct {
		OK      json.RawMessage `json:"ok"`
		Refused *struct {
			Code string `json:"code"`
		} `json:"refused"`
	} `json:"expected"`
}

func readCases(t *testing.T, name string) []vectorCase {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "provared-vectors", name))
	if err != nil {
		t.Fatalf("reading vectors: %v", err)
	}
	var f struct {
		Cases []vectorCase `json:"cases"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatalf("reading %s: %v", name, err)
	}
	if len(f.Cases) == 0 {
		t.Fatalf("%s holds no cases", name)
	}
	return f.Cases
}

func TestOriginVectors(t *testing.T) {
	cases := readCases(t, "origins.json")
	if len(cases) != 3710 {
		t.Errorf("origins.json holds %d cases, want 3710", len(cases))
	}
	for i, c := range cases {
		err := CheckOrigin(c.Text, c.RPID)
		if c.Expected.Refused == nil {
			if err != nil {
				t.Errorf("case %d %s: refused with %v, want ok", i, c.Name, err)
			}
			continue
		}
		if got := problem.Code(err); got != c.Expected.Refused.Code {
			t.Errorf("case %d %s: code %q, want %q", i, c.Name, got, c.Expected.Refused.Code)
		}
	}
}

func TestECDSADERVectors(t *testing.T) {
	for _, c := range readCases(t, "ecdsa-der.json") {
		der, err := hex.DecodeString(c.DER)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		raw, err := ECDSADERToRaw(der)
		if c.Expected.Refused != nil {
			if got := problem.Code(err); got != c.Expected.Refused.Code {
				t.Errorf("%s: code %q, want %q", c.Name, got, c.Expected.Refused.Code)
			}
			continue
		}
		var want string
		if err := json.Unmarshal(c.Expected.OK, &want); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if err != nil || hex.EncodeToString(raw) != want {
			t.Errorf("%s: got %x, %v; want %s", c.Name, raw, err, want)
		}
	}
}

func TestOriginRules(t *testing.T) {
	tests := []struct {
		origin, rpID string
		ok           bool
	}{
		{"https://sign.example.org", "example.org", true},
		{"https://example.org", "org", true},
		{"http://localhost", "localhost", true},
		{"http://localhost:8080", "localhost", true},
		{"https://example.org:443", "example.org", false},
		{"http://localhost:80", "localhost", false},
		{"http://sign", "sign", false},
		{"https://example.org/", "example.org", false},
		{"https://example.org.", "example.org", false},
		{"https://Example.org", "example.org", false},
		{"https://example.org:0443", "example.org", false},
		{"https://example.org:65536", "example.org", false},
		{"https://1.2.3.4", "1.2.3.4", false},
		{"https://-a.org", "org", false},
		{"https://evil-example.org", "example.org", false},
		{"", "example.org", false},
	}
	for _, tt := range tests {
		err := CheckOrigin(tt.origin, tt.rpID)
		if (err == nil) != tt.ok {
			t.Errorf("CheckOrigin(%q, %q) = %v, want ok=%v", tt.origin, tt.rpID, err, tt.ok)
		}
		if err != nil && problem.Code(err) != "bad-field" {
			t.Errorf("CheckOrigin(%q, %q): code %q", tt.origin, tt.rpID, problem.Code(err))
		}
	}
}
