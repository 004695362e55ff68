package consent

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
)

// The format's approval-requests vectors test the reference's requestOf,
// which takes any value. The typed Go API (slip.RequestText, which
// CheckApproval compares) takes a content object; these cases are set
// aside, each with its reason. The other approval and cancellation vectors
// (contents, prepared, assembled) are run in package slip.
var requestsSetAside = map[string]string{
	"a lone surrogate":               "a Go string cannot hold a lone surrogate (encoding/json reads it as U+FFFD)",
	"a lone surrogate in a document": "a Go string cannot hold a lone surrogate (encoding/json reads it as U+FFFD)",
	"a list":                         "RequestText takes a content object, not a list",
	"text":                           "RequestText takes a content object, not text",
	"a number":                       "RequestText takes a content object, not a number",
	"null":                           "RequestText takes a content object, not null",
}

func TestApprovalRequestsVectors(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "provared-vectors", "approval-requests.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []struct {
			Name     string          `json:"name"`
			Content  json.RawMessage `json:"content"`
			Expected struct {
				OK      *string `json:"ok"`
				Refused *struct {
					Code string `json:"code"`
				} `json:"refused"`
			} `json:"expected"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &f); err != nil || len(f.Cases) == 0 {
		t.Fatalf("reading the vectors: %v", err)
	}
	setAside := 0
	for i, c := range f.Cases {
		if why, ok := requestsSetAside[c.Name]; ok {
			t.Logf("set aside %q: %s", c.Name, why)
			setAside++
			continue
		}
		m, ok := value(t, c.Content).(map[string]any)
		if !ok {
			t.Errorf("%d %s: not an object, and not set aside", i, c.Name)
			continue
		}
		got, err := slip.RequestText(m)
		switch {
		case c.Expected.Refused != nil:
			if problem.Code(err) != c.Expected.Refused.Code {
				t.Errorf("%d %s: code %q (%v), want %q", i, c.Name, problem.Code(err), err, c.Expected.Refused.Code)
			}
		case err != nil:
			t.Errorf("%d %s: refused: %v", i, c.Name, err)
		case string(got) != *c.Expected.OK:
			t.Errorf("%d %s:\n got %s\nwant %s", i, c.Name, got, *c.Expected.OK)
		}
	}
	if setAside != len(requestsSetAside) {
		t.Errorf("%d cases set aside, the list names %d", setAside, len(requestsSetAside))
	}
}

// value decodes JSON as the format's readers take it: int64 for whole
// numbers 0 … 2^53−1, json.Number for any other number.
func value(t *testing.T, raw []byte) any {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return numbers(v)
}

func numbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = numbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbers(e)
		}
	case json.Number:
		if n, err := strconv.ParseInt(string(x), 10, 64); err == nil && n >= 0 && n <= 1<<53-1 {
			return n
		}
	}
	return v
}
