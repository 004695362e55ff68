package canon

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
)

// vectorDir holds the reference's test vectors (read-only copies).
const vectorDir = "../../testdata/provared-vectors"

type vectorCase struct {
	Name     string          `json:"name"`
	Text     string          `json:"text"`
	Expected vectorExpected  `json:"expected"`
	Raw      json.RawMessage `json:"-"`
}

type vectorExpected struct {
	OK      json.RawMessage `json:"ok"`
	Refused *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"refused"`
}

func loadVectors(t testing.TB, file, function string) []vectorCase {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(vectorDir, file))
	if err != nil {
		t.Fatalf("reading vectors: %v", err)
	}
	var v struct {
		Function string       `json:"function"`
		Cases    []vectorCase `json:"cases"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decoding %s: %v", file, err)
	}
	if v.Function != function {
		t.Fatalf("%s: function %q, want %q", file, v.Function, function)
	}
	if len(v.Cases) == 0 {
		t.Fatalf("%s: no cases", file)
	}
	return v.Cases
}

// expectedValue decodes a vector's expected value into canonical Go
// values (numbers as int64).
func expectedValue(t *testing.T, raw json.RawMessage) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decoding expected value: %v", err)
	}
	var conv func(any) any
	conv = func(v any) any {
		switch x := v.(type) {
		case json.Number:
			n, err := x.Int64()
			if err != nil {
				t.Fatalf("expected number %s is not whole", x)
			}
			return n
		case []any:
			for i := range x {
				x[i] = conv(x[i])
			}
		case map[string]any:
			for k := range x {
				x[k] = conv(x[k])
			}
		}
		return v
	}
	return conv(v)
}

func TestCanonicalJSONVectors(t *testing.T) {
	for _, c := range loadVectors(t, "canonical-json.json", "parseCanonical") {
		t.Run(c.Name, func(t *testing.T) {
			got, err := Parse([]byte(c.Text))
			if c.Expected.Refused != nil {
				if code := problem.Code(err); code != c.Expected.Refused.Code {
					t.Fatalf("code %q (%v), want %q", code, err, c.Expected.Refused.Code)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if want := expectedValue(t, c.Expected.OK); !reflect.DeepEqual(got, want) {
				t.Fatalf("value %#v, want %#v", got, want)
			}
			again, err := Marshal(got)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if string(again) != c.Text {
				t.Fatalf("Marshal gives %q, want %q", again, c.Text)
			}
		})
	}
}

func TestBase64urlVectors(t *testing.T) {
	for _, c := range loadVectors(t, "base64url.json", "fromBase64url") {
		t.Run(c.Name, func(t *testing.T) {
			got, err := UnB64(c.Text)
			if c.Expected.Refused != nil {
				if code := problem.Code(err); code != c.Expected.Refused.Code {
					t.Fatalf("code %q (%v), want %q", code, err, c.Expected.Refused.Code)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			var wantHex string
			if err := json.Unmarshal(c.Expected.OK, &wantHex); err != nil {
				t.Fatal(err)
			}
			if hex.EncodeToString(got) != wantHex {
				t.Fatalf("got %x, want %s", got, wantHex)
			}
			if B64(got) != c.Text {
				t.Fatalf("B64 gives %q, want %q", B64(got), c.Text)
			}
		})
	}
}

func TestTimeVectors(t *testing.T) {
	for _, c := range loadVectors(t, "times.json", "parseTime") {
		t.Run(c.Name, func(t *testing.T) {
			var want *int64
			if err := json.Unmarshal(c.Expected.OK, &want); err != nil {
				t.Fatal(err)
			}
			got, ok := ParseTime(c.Text)
			if want == nil {
				if ok {
					t.Fatalf("accepted as %v", got)
				}
				return
			}
			if !ok {
				t.Fatal("refused")
			}
			if got.UnixMilli() != *want {
				t.Fatalf("got %d ms, want %d", got.UnixMilli(), *want)
			}
			if FormatTime(got) != c.Text {
				t.Fatalf("FormatTime gives %q", FormatTime(got))
			}
		})
	}
}

// charactersSetAside lists the character-count cases that cannot be run
// in Go, with the reason.
var charactersSetAside = map[string]string{
	// The reference counts a lone low surrogate as 0 (a quirk of counting
	// code points in a UTF-16 string). A Go string cannot hold a lone
	// surrogate: decoding the vector turns it into U+FFFD, one code point.
	"a lone second half": "a Go string cannot hold a lone surrogate",
}

func TestCharacterVectors(t *testing.T) {
	for _, c := range loadVectors(t, "characters.json", "countCharacters") {
		t.Run(c.Name, func(t *testing.T) {
			if reason, ok := charactersSetAside[c.Name]; ok {
				t.Logf("set aside: %s", reason)
				return
			}
			var want int
			if err := json.Unmarshal(c.Expected.OK, &want); err != nil {
				t.Fatal(err)
			}
			if got := Chars(c.Text); got != want {
				t.Fatalf("Chars = %d, want %d", got, want)
			}
		})
	}
}

// fingerprintSetAside lists the argument values of the "fingerprint"
// steps that have no JSON text, so cannot reach JCS, which takes text.
var fingerprintSetAside = map[string]string{
	`{"$":"undefined"}`: "JavaScript's undefined has no JSON text; an absent argument never reaches JCS",
}

// TestArgumentFingerprintVectors runs every "fingerprint" step of the
// recorder scenarios against JCSFingerprint of the step's arguments.
func TestArgumentFingerprintVectors(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(vectorDir, "tool-scenarios.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Cases []struct {
			Name  string `json:"name"`
			Steps []struct {
				Op   string          `json:"op"`
				Args json.RawMessage `json:"args"`
			} `json:"steps"`
			Expected struct {
				OK []struct {
					Op  string `json:"op"`
					Out struct {
						Fingerprint string `json:"fingerprint"`
						Error       *struct {
							Code string `json:"code"`
						} `json:"error"`
					} `json:"out"`
				} `json:"ok"`
			} `json:"expected"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	ran := 0
	for ci, c := range file.Cases {
		if len(c.Steps) != len(c.Expected.OK) {
			t.Fatalf("case %d: %d steps but %d transcript entries", ci, len(c.Steps), len(c.Expected.OK))
		}
		for si, step := range c.Steps {
			if step.Op != "fingerprint" {
				continue
			}
			want := c.Expected.OK[si]
			if want.Op != "fingerprint" {
				t.Fatalf("case %d step %d: transcript op %q", ci, si, want.Op)
			}
			args := resolveArgs(t, step.Args)
			name := c.Name[:min(len(c.Name), 30)] + "/" + string(args[:min(len(args), 40)])
			t.Run(name, func(t *testing.T) {
				if reason, ok := fingerprintSetAside[string(args)]; ok {
					t.Logf("set aside: %s", reason)
					return
				}
				ran++
				got, err := JCSFingerprint(args)
				if want.Out.Error != nil {
					if code := problem.Code(err); code != want.Out.Error.Code {
						t.Fatalf("code %q (%v), want %q", code, err, want.Out.Error.Code)
					}
					return
				}
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if got != want.Out.Fingerprint {
					t.Fatalf("fingerprint %s, want %s", got, want.Out.Fingerprint)
				}
			})
		}
	}
	if ran < 28 {
		t.Fatalf("only %d fingerprint steps ran", ran)
	}
}

// resolveArgs turns a step's arguments, as the scenario file writes them,
// into JSON text: {"$":"-0"} and the like become that number's text, and
// {"$nest":n,"leaf":v} becomes v inside n lists. Everything else keeps
// its own text, so number forms and escapes such as a lone surrogate
// reach JCS as written.
func resolveArgs(t *testing.T, raw json.RawMessage) []byte {
	t.Helper()
	trimmed := bytes.TrimSpace(raw)
	switch {
	case len(trimmed) > 0 && trimmed[0] == '{':
		var m map[string]json.RawMessage
		if err := json.Unmarshal(trimmed, &m); err != nil {
			t.Fatal(err)
		}
		if special, ok := m["$"]; ok && len(m) == 1 {
			var s string
			if err := json.Unmarshal(special, &s); err != nil {
				t.Fatal(err)
			}
			if s == "undefined" {
				return []byte(`{"$":"undefined"}`)
			}
			return []byte(s) // -0, NaN, Infinity, -Infinity
		}
		if n, ok := m["$nest"]; ok {
			var depth int
			if err := json.Unmarshal(n, &depth); err != nil {
				t.Fatal(err)
			}
			leaf := resolveArgs(t, m["leaf"])
			return []byte(strings.Repeat("[", depth) + string(leaf) + strings.Repeat("]", depth))
		}
		var b bytes.Buffer
		b.WriteByte('{')
		first := true
		for k, v := range m {
			if !first {
				b.WriteByte(',')
			}
			first = false
			key, err := json.Marshal(k)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(key)
			b.WriteByte(':')
			b.Write(resolveArgs(t, v))
		}
		b.WriteByte('}')
		return b.Bytes()
	case len(trimmed) > 0 && trimmed[0] == '[':
		var a []json.RawMessage
		if err := json.Unmarshal(trimmed, &a); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		b.WriteByte('[')
		for i, v := range a {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(resolveArgs(t, v))
		}
		b.WriteByte(']')
		return b.Bytes()
	default:
		return trimmed
	}
}
