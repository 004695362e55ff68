package copylog

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
)

// TestTagChecksAsTheCanonicalBody: the short way of checking a tag (the
// raw line without its tag member) gives the verdict of the long way (the
// body's canonical form made again) on a line as written, with its tag
// changed and with its body changed. (canon.Parse takes canonical JSON
// only, so a line with its members moved is refused before its tag.)
func TestTagChecksAsTheCanonicalBody(t *testing.T) {
	written := bytes.TrimSuffix(encodeLines(t, testKey, testName, sentLine("c1")), []byte("\n"))
	obj, err := canon.Parse(written)
	if err != nil {
		t.Fatal(err)
	}
	tagText := obj.(map[string]any)["tag"].(string)
	otherTag := canon.B64(bytes.Repeat([]byte{3}, 32))
	cases := []struct {
		name string
		raw  []byte
		want bool
	}{
		{"as written", written, true},
		{"tag member changed", bytes.Replace(written, []byte(tagText), []byte(otherTag), 1), false},
		{"body changed", bytes.Replace(written, []byte(`"c1"`), []byte(`"c2"`), 1), false},
		{"tag member and its text in a value", bytes.Replace(written, []byte(`"call":"c1"`), []byte(`"call":"`+tagText+`"`), 1), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := canon.Parse(c.raw)
			if err != nil {
				t.Fatal(err)
			}
			o := v.(map[string]any)
			text, _ := o["tag"].(string)
			tag, _ := canon.UnB64(text)
			body := map[string]any{}
			for k, v := range o {
				if k != "tag" {
					body[k] = v
				}
			}
			input, err := canon.Marshal(body)
			if err != nil {
				t.Fatal(err)
			}
			long := hmac.Equal(tag, sum(testKey, input))
			if got := tagChecks(c.raw, o, text, tag, hmac.New(sha256.New, testKey)); got != long || got != c.want {
				t.Fatalf("short way %v, long way %v, want %v", got, long, c.want)
			}
		})
	}
}

func TestTagMember(t *testing.T) {
	for _, c := range []struct{ raw, want string }{
		{`{"a":1,"tag":"T","z":2}`, `{"a":1,"z":2}`},
		{`{"tag":"T","z":2}`, `{"z":2}`},
		{`{"a":1,"tag":"T"}`, `{"a":1}`},
		{`{"tag":"T"}`, `{}`},
		{`{"a":"\"tag\":\"T\"","tag":"U"}`, ""},
		{`{"a":1,"tag":"T","b":{"tag":"T"}}`, ""},
	} {
		i, j, ok := tagMember([]byte(c.raw), "T")
		got := ""
		if ok {
			got = c.raw[:i] + c.raw[j:]
		}
		if got != c.want || (c.want == "") == ok {
			t.Errorf("tagMember(%s) = %q (%v), want %q", c.raw, got, ok, c.want)
		}
	}
}
