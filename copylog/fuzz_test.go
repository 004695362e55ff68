package copylog

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzVerify feeds arbitrary file contents to the line reader. It must never
// panic; without a key nothing verifies; under another key nothing
// verifies; and whatever verifies under the test key is written back byte
// for byte by the encoder (one spelling per line, so no line can be changed
// and still check).
func FuzzVerify(f *testing.F) {
	golden, err := os.ReadFile(filepath.Join("testdata", "every-kind.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(golden)
	if approvals, err := os.ReadFile(filepath.Join("testdata", "approval-kinds.jsonl")); err == nil {
		f.Add(approvals)
	} else {
		f.Fatal(err)
	}
	f.Add(golden[:len(golden)-1])
	lines := splitLines(golden)
	f.Add(bytes.Join([][]byte{lines[1], lines[0]}, nil))
	f.Add(lines[0])
	f.Add([]byte("\n"))
	f.Add([]byte(`{"kind":"start","seq":1,"tag":"AAAA"}` + "\n"))
	f.Add([]byte{0xff, '\n'})
	otherKey := bytes.Repeat([]byte{2}, KeySize)
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := Verify(data, nil, testName); len(data) > 0 && !errors.Is(err, ErrKeyMissing) {
			t.Fatalf("without a key: %v", err)
		}
		if _, err := Verify(data, otherKey, testName); len(data) > 0 && err == nil {
			t.Fatal("verified under another key")
		}
		got, err := Verify(data, testKey, testName)
		if err != nil {
			var le *LineError
			if errors.As(err, &le) && (le.Line < 1 || le.Err == nil) {
				t.Fatalf("line error without a line or a sentinel: %#v", le)
			}
			return
		}
		if again := encodeLines(t, testKey, testName, got...); !bytes.Equal(again, data) {
			t.Fatalf("verified text is not the encoder's:\n%q\n%q", data, again)
		}
	})
}
