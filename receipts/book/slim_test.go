package book

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
)

// blankedValue is what blankHybridSignatures must give, computed the long
// way: the line parsed, each hybrid record's signature values made "".
func blankedValue(t testing.TB, line []byte) (any, bool) {
	t.Helper()
	v, err := canon.Parse(line)
	if err != nil {
		return nil, false
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	for name := range hybridMembers {
		env, ok := obj[name].(map[string]any)
		if !ok {
			continue
		}
		sigs, _ := env["signatures"].([]any)
		for _, s := range sigs {
			if m, ok := s.(map[string]any); ok {
				if _, has := m["signature"]; has {
					m["signature"] = ""
				}
			}
		}
	}
	return obj, true
}

// fixtureLines are real lines of every kind the fixture makes: the slip, a
// countersigned stub, a stub with its person's approval.
func fixtureLines(t testing.TB) map[string][]byte {
	f := newFixture(t, map[string]any{"requires": []any{map[string]any{"need": "countersignature"}}})
	p := Proposal{Slip: f.slip.Fingerprint, Action: "tool.a", With: "executor", When: f.start.Add(time.Minute)}
	withApproval := p
	withApproval.Approval = f.approval(t, p)
	lines := map[string][]byte{}
	for name, l := range map[string]Line{
		"slip":          f.slipLine(),
		"stub":          f.line(t, Position{Seq: 1, Previous: f.slip.Fingerprint}, p),
		"with approval": f.line(t, Position{Seq: 1, Previous: f.slip.Fingerprint}, withApproval),
	} {
		b, err := l.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		lines[name] = b
	}
	return lines
}

// TestBlankHybridSignatures: on real lines the blanked text parses to the
// line's value with only the hybrid signatures made "" (a passkey
// signature, the slip's and the approval's, stays), and it is much shorter
// for a stub; a line of another shape is left to the full parse.
func TestBlankHybridSignatures(t *testing.T) {
	for name, line := range fixtureLines(t) {
		t.Run(name, func(t *testing.T) {
			got, ok := blankHybridSignatures(line, nil)
			if !ok {
				t.Fatalf("a real %s line was not blanked", name)
			}
			want, _ := blankedValue(t, line)
			v, err := canon.Parse(got)
			if err != nil {
				t.Fatalf("the blanked text does not parse: %v", err)
			}
			if !reflect.DeepEqual(v, want) {
				t.Fatalf("the blanked text reads otherwise:\n%s", got)
			}
			if name != "slip" && len(got) > len(line)/2 {
				t.Errorf("%d of %d bytes left: the signatures were not left out", len(got), len(line))
			}
			if name == "slip" && !bytes.Equal(got, line) {
				t.Error("a slip line (passkey-signed) was changed")
			}
		})
	}
	for _, bad := range []string{``, `{}`, `[]`, `{"stub":1}`, `{"stub":{"payload":"a","signatures":[{"protected":"b","signature":"c\"d"}]}}`,
		`{"stub":{"payload":"a","signatures":[]}}`, `{"x":"y"`, `{"x":{"a":[1,2]}`, `{"stub":{"payload":"a","signatures":[{"protected":"b","signature":"c"}]},}`} {
		if got, ok := blankHybridSignatures([]byte(bad), nil); ok {
			if _, err := canon.Parse(got); err == nil {
				if _, perr := canon.Parse([]byte(bad)); perr != nil {
					t.Errorf("%s: blanked into %s, which parses though the line does not", bad, got)
				}
			}
		}
	}
}

// FuzzBlankHybridSignatures: whenever the line parses and is blanked, the
// blanked text parses to the line's value with its hybrid signatures made
// "", and to nothing else; it never panics.
func FuzzBlankHybridSignatures(f *testing.F) {
	for _, line := range fixtureLines(f) {
		f.Add(line)
	}
	f.Add([]byte(`{"acknowledgement":{"payload":"a","signatures":[{"protected":"b","signature":"c"},{"protected":"d","signature":"e"}]}}`))
	f.Add([]byte(`{"approval":{"payload":"x","signatures":[{"header":{"a":"\"signature\":\""},"protected":"p","signature":"s"}]},"stub":{"payload":"a","signatures":[{"protected":"b","signature":"c"}]}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		got, ok := blankHybridSignatures(line, nil)
		want, parses := blankedValue(t, line)
		if !ok || !parses {
			return
		}
		v, err := canon.Parse(got)
		if err != nil {
			t.Fatalf("%q parses, its blanked text %q does not: %v", line, got, err)
		}
		if !reflect.DeepEqual(v, want) {
			t.Fatalf("%q: blanked into %q, which reads otherwise", line, got)
		}
	})
}
