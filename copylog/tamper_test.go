package copylog

import (
	"bytes"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/receipt"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// base is a small copy every tamper case starts from.
func base(t *testing.T) [][]byte {
	return splitLines(encodeLines(t, testKey, testName,
		Line{Kind: KindStart, When: at}, sentLine("call-1"), receiptLine("call-1", fp("stub-1")), withdrawnLine("call-2")))
}

// flipTagChar changes the first character of a line's tag.
func flipTagChar(line []byte) []byte {
	out := bytes.Clone(line)
	i := bytes.Index(out, []byte(`"tag":"`)) + len(`"tag":"`)
	if out[i] == 'A' {
		out[i] = 'B'
	} else {
		out[i] = 'A'
	}
	return out
}

func join(lines ...[]byte) []byte { return bytes.Join(lines, nil) }

// tagged writes a body under the test key as line seq, bypassing the
// field checks, to make lines that check but are not copy lines.
func taggedBody(t *testing.T, body map[string]any, seq int64) []byte {
	t.Helper()
	l := &Log{key: testKey, name: testName}
	b, err := l.tagLine(body, seq)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sentBody is a line's body as Append tags it.
func sentBody(t *testing.T, ln Line) map[string]any {
	t.Helper()
	b, err := ln.body()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestVerifyFindsTampering(t *testing.T) {
	otherKey := bytes.Repeat([]byte{2}, KeySize)
	tests := []struct {
		name     string
		data     func(l [][]byte) []byte
		key      []byte
		sentinel error
		want     string // the exact error text
	}{
		{
			name: "a byte changed",
			data: func(l [][]byte) []byte {
				return join(l[0], l[1], bytes.Replace(l[2], []byte("call-1"), []byte("call-9"), 1), l[3])
			},
			sentinel: ErrTampered,
			want:     `copy line 3: the tag does not check under the copy key: the line was changed (it names executor "executor for the files server")`,
		},
		{
			name:     "a byte of the tag changed",
			data:     func(l [][]byte) []byte { return join(l[0], flipTagChar(l[1]), l[2], l[3]) },
			sentinel: ErrTampered,
			want:     `copy line 2: the tag does not check under the copy key: the line was changed (it names executor "executor for the files server")`,
		},
		{
			name: "a tag of the wrong length",
			data: func(l [][]byte) []byte {
				return join(l[0], bytes.Replace(l[1], []byte(`"tag":"`), []byte(`"tag":"AAAA`), 1), l[2], l[3])
			},
			sentinel: ErrTampered,
			want:     `copy line 2: the line's tag is not 32 bytes of base64url`,
		},
		{
			name:     "a line taken out",
			data:     func(l [][]byte) []byte { return join(l[0], l[2], l[3]) },
			sentinel: ErrTampered,
			want:     "copy line 2: the line carries number 3 where 2 belongs: a line was taken out",
		},
		{
			name:     "a line put twice",
			data:     func(l [][]byte) []byte { return join(l[0], l[1], l[1], l[2], l[3]) },
			sentinel: ErrTampered,
			want:     "copy line 3: the line repeats line 2 (number 2): a line was put twice",
		},
		{
			name:     "a line put twice at the end",
			data:     func(l [][]byte) []byte { return join(l[0], l[1], l[2], l[3], l[0]) },
			sentinel: ErrTampered,
			want:     "copy line 5: the line repeats line 1 (number 1): a line was put twice",
		},
		{
			name:     "a line moved",
			data:     func(l [][]byte) []byte { return join(l[0], l[2], l[1], l[3]) },
			sentinel: ErrTampered,
			want:     "copy line 2: the line carries number 3 where 2 belongs; number 2 is at line 3: a line was moved",
		},
		{
			name:     "the last line cut by a stop",
			data:     func(l [][]byte) []byte { return join(l[0], l[1], l[2], l[3][:len(l[3])/2]) },
			sentinel: ErrCutLine,
			want:     "copy line 4: the last line has no end (LF): a stop cut it while it was being written",
		},
		{
			name:     "only the last LF cut",
			data:     func(l [][]byte) []byte { return join(l[0], l[1], l[2], l[3][:len(l[3])-1]) },
			sentinel: ErrCutLine,
			want:     "copy line 4: the last line has no end (LF): a stop cut it while it was being written",
		},
		{
			name:     "the wrong key",
			data:     func(l [][]byte) []byte { return join(l...) },
			key:      otherKey,
			sentinel: ErrWrongKey,
			want:     "copy line 1: no line checks under the copy key given: the key is not this copy's, or every line was changed",
		},
		{
			name: "another executor's lines under the same key",
			data: func(l [][]byte) []byte {
				return encodeLines(t, testKey, "another executor", Line{Kind: KindStart, When: at}, withdrawnLine("x"))
			},
			sentinel: ErrOtherExecutor,
			want:     `copy line 1: the line was written by executor "another executor", not "executor for the files server"`,
		},
		{
			name: "another executor's line under its own key",
			data: func(l [][]byte) []byte {
				other := encodeLines(t, otherKey, "another executor", Line{Kind: KindStart, When: at}, withdrawnLine("x"))
				return join(l[0], l[1], splitLines(other)[1])
			},
			sentinel: ErrTampered,
			want:     `copy line 3: the tag does not check under the copy key: the line was changed (it names executor "another executor")`,
		},
		{
			name:     "an empty line",
			data:     func(l [][]byte) []byte { return join(l[0], []byte("\n"), l[1]) },
			sentinel: ErrTampered,
			want:     "copy line 2: the line is empty",
		},
		{
			name:     "a line with no tag",
			data:     func(l [][]byte) []byte { return join(l[0], []byte(`{"kind":"start","seq":2}`+"\n")) },
			sentinel: ErrTampered,
			want:     "copy line 2: the line has no tag",
		},
		{
			name:     "not an object",
			data:     func(l [][]byte) []byte { return join(l[0], []byte(`["start"]`+"\n")) },
			sentinel: ErrTampered,
			want:     "copy line 2: not a copy line (not an object)",
		},
		{
			name: "a line that checks with a member of another kind",
			data: func(l [][]byte) []byte {
				return join(l[0], taggedBody(t, map[string]any{"kind": "start", "when": "2026-11-29T20:00:00Z", "whenMs": int64(1795982400000), "stub": fp("x")}, 2))
			},
			sentinel: ErrTampered,
			want:     `copy line 2: the line checks but is not a copy line: member "stub" does not belong to a start line`,
		},
		{
			name: "a line that checks with two times",
			data: func(l [][]byte) []byte {
				return join(l[0], taggedBody(t, map[string]any{"kind": "start", "when": "2026-11-29T20:00:01Z", "whenMs": int64(1795982400000)}, 2))
			},
			sentinel: ErrTampered,
			want:     "copy line 2: the line checks but is not a copy line: when and whenMs name different times",
		},
		{
			name: "a line that checks with a time of sending on another kind",
			data: func(l [][]byte) []byte {
				return join(l[0], taggedBody(t, map[string]any{"kind": "withdrawn", "call": "c", "when": "2026-11-29T20:00:00Z", "whenMs": int64(1795982400000),
					"sentMs": int64(1795982400001)}, 2))
			},
			sentinel: ErrTampered,
			want:     `copy line 2: the line checks but is not a copy line: member "sentMs" does not belong to a withdrawn line`,
		},
		{
			name: "a sent line that checks with a time of sending as text",
			data: func(l [][]byte) []byte {
				body := sentBody(t, sentAtLine("c", at, at.Add(5*time.Millisecond)))
				body["sentMs"] = "1795982400005"
				return join(l[0], taggedBody(t, body, 2))
			},
			sentinel: ErrTampered,
			want:     `copy line 2: the line checks but is not a copy line: member sentMs must be a whole number`,
		},
		{
			name: "a receipt line that checks with a time with the server past its bound",
			data: func(l [][]byte) []byte {
				body := sentBody(t, Line{Kind: KindReceipt, When: at, Call: "c", Stub: fp("s"), Outcome: &record.Detail{Name: receipt.LabelToolResult, SHA256: fp("r")}})
				body["serverMs"] = int64(MaxServerMs + 1)
				return join(l[0], taggedBody(t, body, 2))
			},
			sentinel: ErrTampered,
			want:     `copy line 2: the line checks but is not a copy line: serverMs must be a whole number of milliseconds from 0 to 2592000000`,
		},
		{
			name:     "no key for a copy that holds lines",
			data:     func(l [][]byte) []byte { return join(l...) },
			key:      []byte{},
			sentinel: ErrKeyMissing,
			want:     "copy holds lines but no copy key was given: copy key missing",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			key := tc.key
			if key == nil {
				key = testKey
			}
			lines, err := Verify(tc.data(base(t)), key, testName)
			if err == nil {
				t.Fatalf("Verify accepted it: %d lines", len(lines))
			}
			if err.Error() != tc.want {
				t.Errorf("error\n got %q\nwant %q", err, tc.want)
			}
			if !errors.Is(err, tc.sentinel) {
				t.Errorf("error does not wrap %v", tc.sentinel)
			}
		})
	}
}

func TestVerifyTagFaultsAreTampering(t *testing.T) {
	for _, s := range []error{ErrWrongKey, ErrOtherExecutor} {
		if !errors.Is(s, ErrTampered) {
			t.Errorf("%v is not an ErrTampered", s)
		}
	}
	_, err := Verify(join(base(t)...), bytes.Repeat([]byte{9}, KeySize), testName)
	var le *LineError
	if !errors.As(err, &le) || le.Line != 1 || !errors.Is(err, ErrTampered) {
		t.Errorf("wrong key: %v", err)
	}
}

// TestOpenRefusesTamperedCopy shows that Open names the file and the line,
// and leaves the copy as it was.
func TestOpenRefusesTamperedCopy(t *testing.T) {
	l := base(t)
	data := join(l[0], l[2], l[3])
	path := tempCopy(t)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(path, testKey, testName)
	want := "copy " + path + " line 2: the line carries number 3 where 2 belongs: a line was taken out"
	if err == nil || err.Error() != want || !errors.Is(err, ErrTampered) {
		t.Errorf("Open = %v, want %q", err, want)
	}
	if !bytes.Equal(readBytes(t, path), data) {
		t.Error("Open changed a copy it refused")
	}
	// The key is missing while the copy holds lines.
	_, err = Open(path, nil, testName)
	want = "opening copy " + path + ": it holds lines but no copy key was given: copy key missing"
	if err == nil || err.Error() != want || !errors.Is(err, ErrKeyMissing) {
		t.Errorf("Open without key = %v, want %q", err, want)
	}
	// A cut copy is refused too, and ReadFile says the same as Open.
	if err := os.WriteFile(path, join(l[0], l[1][:10]), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOpen := Open(path, testKey, testName)
	_, errRead := ReadFile(path, testKey, testName)
	want = "copy " + path + " line 2: the last line has no end (LF): a stop cut it while it was being written"
	for _, err := range []error{errOpen, errRead} {
		if err == nil || err.Error() != want || !errors.Is(err, ErrCutLine) {
			t.Errorf("got %v, want %q", err, want)
		}
	}
}
