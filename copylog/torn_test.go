package copylog

import (
	"bytes"
	"errors"
	"os"
	"testing"
)

// A stop in the middle of a write leaves the copy's last line without its
// line feed, whole or not: the start sets those bytes aside, keeps them, and
// the copy then opens and goes on numbering where the whole lines end.
func TestRepairTornLine(t *testing.T) {
	whole := encodeLines(t, testKey, testName, sentLine("call-1"), receiptLine("call-1", fp("stub 1")), sentLine("call-2"))
	next := splitLines(encodeLines(t, testKey, testName, sentLine("call-1"), receiptLine("call-1", fp("stub 1")),
		sentLine("call-2"), receiptLine("call-2", fp("stub 2"))))[3]
	for _, tc := range []struct {
		name string
		tail []byte
	}{
		{"half a line", next[:len(next)/2]},
		{"all but the line feed", next[:len(next)-1]},
		{"one byte", next[:1]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tempCopy(t)
			if err := os.WriteFile(path, append(append([]byte(nil), whole...), tc.tail...), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := ReadFile(path, testKey, testName); !errors.Is(err, ErrCutLine) {
				t.Fatalf("before the repair: %v, want ErrCutLine", err)
			}
			torn, err := RepairTornLine(path)
			if err != nil || torn == nil {
				t.Fatalf("RepairTornLine: %+v, %v", torn, err)
			}
			if torn.Line != 4 {
				t.Errorf("torn line %d, want 4", torn.Line)
			}
			if kept, err := os.ReadFile(torn.KeptAt); err != nil || !bytes.Equal(kept, tc.tail) {
				t.Errorf("kept %q (%v), want %q", kept, err, tc.tail)
			}
			if got, _ := os.ReadFile(path); !bytes.Equal(got, whole) {
				t.Errorf("the copy after the repair is not its whole lines")
			}
			l := mustOpen(t, path)
			if err := l.Append(receiptLine("call-2", fp("stub 2"))); err != nil {
				t.Fatal(err)
			}
			lines, err := ReadFile(path, testKey, testName)
			if err != nil || len(lines) != 4 || lines[3].Seq != 4 {
				t.Fatalf("after the repair and one more line: %d lines, %v", len(lines), err)
			}
		})
	}
}

// A whole copy, a missing one and a copy a running executor holds are left
// as they are.
func TestRepairTornLineLeavesAlone(t *testing.T) {
	whole := encodeLines(t, testKey, testName, sentLine("call-1"))
	path := tempCopy(t)
	if torn, err := RepairTornLine(path); torn != nil || err != nil {
		t.Errorf("no copy: %+v, %v", torn, err)
	}
	if err := os.WriteFile(path, whole, 0o600); err != nil {
		t.Fatal(err)
	}
	if torn, err := RepairTornLine(path); torn != nil || err != nil {
		t.Errorf("whole copy: %+v, %v", torn, err)
	}
	l := mustOpen(t, path)
	if err := l.Append(sentLine("call-2")); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"seq":3,"na`); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	if torn, err := RepairTornLine(path); torn != nil || err != nil {
		t.Errorf("copy held by an executor: %+v, %v", torn, err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("a copy held by an executor was changed")
	}
}
