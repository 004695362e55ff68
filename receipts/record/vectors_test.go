package record

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// vectorFile is the common shape of the format's test vector files.
type vectorFile struct {
	About    string            `json:"about"`
	Function string            `json:"function"`
	Cases    []json.RawMessage `json:"cases"`
}

// expected is {"ok": …} or {"refused": {"code", "message"}}.
type expected struct {
	OK      json.RawMessage `json:"ok"`
	Refused *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"refused"`
}

func readVectors(t testing.TB, name string) vectorFile {
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
	return f
}

// jsonValue decodes JSON into the values this package reads: map[string]any,
// []any, string, int64 for whole numbers, float64 for other numbers, bool, nil.
func jsonValue(t testing.TB, raw []byte) any {
	t.Helper()
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
		if n, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return n
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
