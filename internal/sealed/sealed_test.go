package sealed

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

var key = bytes.Repeat([]byte{5}, 32)

// TestSealAndOpen: a sealed record opens to its members under the same key
// and type; changed text, another key, another type and a short key are
// refused, each saying why.
func TestSealAndOpen(t *testing.T) {
	body := map[string]any{"entries": int64(3), "root": "abc"}
	line, err := Seal("test.record.v1", key, body)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(line, []byte("\n")) || !bytes.Contains(line, []byte(`"type":"test.record.v1"`)) {
		t.Fatalf("sealed %q", line)
	}
	got, err := Open("test.record.v1", key, line)
	if err != nil || !reflect.DeepEqual(got, body) {
		t.Fatalf("opened %v, %v; want %v", got, err, body)
	}
	changed := bytes.Replace(line, []byte(`"entries":3`), []byte(`"entries":4`), 1)
	other, err := Seal("test.other.v1", key, body)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		typ  string
		key  []byte
		data []byte
		want string
	}{
		{"changed", "test.record.v1", key, changed, "tag does not check"},
		{"another key", "test.record.v1", bytes.Repeat([]byte{6}, 32), line, "tag does not check"},
		{"another type", "test.record.v1", key, other, "tag does not check"},
		{"not canonical", "test.record.v1", key, []byte(`{ "a":1}`), "not one canonical JSON line"},
		{"not an object", "test.record.v1", key, []byte(`[1]`), "not a JSON object"},
		{"short key", "test.record.v1", key[:15], line, "shorter than 16 bytes"},
	} {
		if _, err := Open(tc.typ, tc.key, tc.data); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	for _, bad := range []map[string]any{{"type": "x"}, {"tag": "x"}} {
		if _, err := Seal("test.record.v1", key, bad); err == nil {
			t.Errorf("sealed a body holding %v", bad)
		}
	}
	if _, err := Seal("test.record.v1", key[:15], body); err == nil {
		t.Error("sealed under a 15-byte key")
	}
}

// FuzzOpen: no text makes Open panic, and any it takes seals again to the
// same text.
func FuzzOpen(f *testing.F) {
	good, err := Seal("test.record.v1", key, map[string]any{"n": int64(1)})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"tag":"","type":"test.record.v1"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		obj, err := Open("test.record.v1", key, data)
		if err != nil {
			return
		}
		again, err := Seal("test.record.v1", key, obj)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(bytes.TrimSuffix(again, []byte("\n")), bytes.TrimSuffix(data, []byte("\n"))) {
			t.Fatalf("took %q, seals as %q", data, again)
		}
	})
}
