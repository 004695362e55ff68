package slip

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
)

// vectorFile is the common shape of the format's test vector files.
type vectorFile struct {
	Function string            `json:"function"`
	Cases    []json.RawMessage `json:"cases"`
}

type refusal struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type expected struct {
	OK      json.RawMessage `json:"ok"`
	Refused *refusal        `json:"refused"`
}

func readVectors(t testing.TB, name string) []json.RawMessage {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "provared-vectors", name))
	if err != nil {
		t.Fatalf("reading vectors: %v", err)
	}
	var f vectorFile
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatalf("reading %s: %v", name, err)
	}
	if len(f.Cases) == 0 {
		t.Fatalf("%s holds no cases", name)
	}
	return f.Cases
}

// jsonValue decodes JSON into the values the format's readers take:
// map[string]any, []any, string, int64 for whole numbers 0 … 2^53−1, and,
// for anything a canonical value cannot hold, json.Number, bool or nil.
func jsonValue(t testing.TB, raw []byte) any {
	t.Helper()
	if len(raw) == 0 {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decoding: %v", err)
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

func codes(ps []*problem.Error) []string {
	out := []string{}
	for _, p := range ps {
		out = append(out, p.Code)
	}
	return out
}
