package copylog

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

// hostileSent is a sent line whose tool name holds the text of another
// kind's member, escaped as canonical JSON escapes it: the kind read from
// the bytes must still be the line's own.
func hostileSent(call string) Line {
	ln := sentLine(call)
	ln.Tool = `x","kind":"approval-request\"kind\":\"redaction-salt"`
	return ln
}

// checkpointLines is a copy with every kind a start keeps: approval lines,
// two salts, sent lines (one with a hostile tool name), receipts, a
// denial, a withdrawn call, and a call finished at a restart.
func checkpointLines() []Line {
	lines := []Line{{Kind: KindStart, When: at}, {Kind: KindRedactionSalt, When: at, Salt: SaltText(bytes.Repeat([]byte{7}, 32))}}
	lines = append(lines, sentLine("c1"), receiptLine("c1", fp("s1")), hostileSent("c2"), receiptLine("c2", fp("s2")))
	lines = append(lines, approvalLines()...)
	lines = append(lines, denialLine("c3", fp("r3"), ""), withdrawnLine("c4"), sentLine("c5"), notWrittenLine("c5"), lateReceiptLine("c5", fp("s5")))
	return append(lines, Line{Kind: KindRedactionSalt, When: at, Salt: SaltText(bytes.Repeat([]byte{8}, 32))})
}

// opened is what a start gets from Open: what it hands on and keeps.
type opened struct {
	use        string
	visited    []Line
	approvals  []Line
	unfinished []Unfinished
	next       int64
}

func openFor(t *testing.T, path string, kinds ...Kind) opened {
	t.Helper()
	var o opened
	l, err := OpenWith(path, testKey, testName, Visit{Kinds: kinds, Each: func(ln Line) error {
		o.visited = append(o.visited, ln)
		return nil
	}})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	o.use, o.approvals, o.unfinished, o.next = l.CheckpointUse(), l.ApprovalLines(), l.Unfinished(), l.nextSeq
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return o
}

// withoutCheckpoint opens the copy at path as it would be opened with no
// checkpoint beside it: the whole copy read, for reference.
func withoutCheckpoint(t *testing.T, path string, kinds ...Kind) opened {
	t.Helper()
	cp := CheckpointPath(path)
	saved, err := os.ReadFile(cp)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(cp); err != nil {
		t.Fatal(err)
	}
	o := openFor(t, path, kinds...)
	if err := os.WriteFile(cp, saved, 0o600); err != nil {
		t.Fatal(err)
	}
	return o
}

func saveCheckpoint(t *testing.T, l *Log) bool {
	t.Helper()
	saved, err := l.SaveCheckpoint()
	if err != nil {
		t.Fatal(err)
	}
	return saved
}

// TestCheckpointOpensAsTheWholeCopy: an Open from the checkpoint hands on
// the same lines of the kinds asked for, keeps the same approval lines and
// unfinished calls and numbers on from the same line as an Open that reads
// the whole copy, for lines before and after the checkpoint, with
// AppendUnsynced lines among them.
func TestCheckpointOpensAsTheWholeCopy(t *testing.T) {
	path := tempCopy(t)
	l := mustOpen(t, path)
	if err := l.Append(checkpointLines()...); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(sentLine("c6")); err != nil {
		t.Fatal(err)
	}
	if err := l.AppendUnsynced(receiptLine("c6", fp("s6"))); err != nil {
		t.Fatal(err)
	}
	if !saveCheckpoint(t, l) {
		t.Fatal("no checkpoint saved with every call finished")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, kinds := range [][]Kind{nil, {KindRedactionSalt}, {KindRedactionSalt, KindSent}, {KindApprovalUse}} {
		got, want := openFor(t, path, kinds...), withoutCheckpoint(t, path, kinds...)
		if got.use != "used" || want.use != "" {
			t.Fatalf("kinds %v: checkpoint use %q and %q", kinds, got.use, want.use)
		}
		got.use = ""
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("kinds %v: from the checkpoint\n%+v\nwhole copy\n%+v", kinds, got, want)
		}
	}
	if got := openFor(t, path, KindSent).visited; len(got) != 4 || got[1].Tool != hostileSent("c2").Tool {
		t.Fatalf("sent lines handed on: %+v", got)
	}

	// Lines after the checkpoint, one call left unfinished: they are read
	// whole, and the checkpoint (still fitting) is not replaced.
	l = mustOpen(t, path)
	before := readBytes(t, CheckpointPath(path))
	if err := l.Append(sentLine("c7"), receiptLine("c7", fp("s7")), approvalLines()[0], sentLine("c8")); err != nil {
		t.Fatal(err)
	}
	if saveCheckpoint(t, l) {
		t.Fatal("a checkpoint was saved while call c8 has no receipt")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readBytes(t, CheckpointPath(path)), before) {
		t.Fatal("the checkpoint changed")
	}
	got, want := openFor(t, path, KindRedactionSalt, KindSent), withoutCheckpoint(t, path, KindRedactionSalt, KindSent)
	if got.use != "used" || len(got.unfinished) != 1 || got.unfinished[0].Sent.Call != "c8" {
		t.Fatalf("after the checkpoint: use %q, unfinished %+v", got.use, got.unfinished)
	}
	got.use = ""
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("from the checkpoint\n%+v\nwhole copy\n%+v", got, want)
	}
	// The next line written carries the next number: the whole copy reads.
	l = mustOpen(t, path)
	if err := l.Append(lateReceiptLine("c8", fp("s8"))); err != nil {
		t.Fatal(err)
	}
	if !saveCheckpoint(t, l) {
		t.Fatal("no checkpoint once c8 has its receipt")
	}
	if lines := linesOf(t, l); int64(len(lines)) != got.next || lines[len(lines)-1].Seq != got.next {
		t.Fatalf("%d lines, the last numbered %d; want %d", len(lines), lines[len(lines)-1].Seq, got.next)
	}
}

// TestCheckpointWaitsForEveryReceipt: a checkpoint is saved only while
// every call the copy shows as sent has its receipt or late receipt, and
// never by a broken or closed log.
func TestCheckpointWaitsForEveryReceipt(t *testing.T) {
	path := tempCopy(t)
	l := mustOpen(t, path)
	if saveCheckpoint(t, l) {
		t.Fatal("a checkpoint of an empty copy")
	}
	for _, step := range []struct {
		line  Line
		saved bool
	}{
		{sentLine("c1"), false},
		{notWrittenLine("c1"), false},
		{sentLine("c2"), false},
		{lateReceiptLine("c1", fp("s1")), false},
		{receiptLine("c2", fp("s2")), true},
		{denialLine("c3", fp("r3"), ""), true},
		{notWrittenLine("c4"), false}, // its sent line comes next
		{sentLine("c4"), false},
		{lateReceiptLine("c4", fp("s4")), true},
	} {
		if err := l.Append(step.line); err != nil {
			t.Fatal(err)
		}
		if got := saveCheckpoint(t, l); got != step.saved {
			t.Fatalf("after %s %s: saved %v, want %v", step.line.Kind, step.line.Call, got, step.saved)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if saveCheckpoint(t, l) {
		t.Fatal("a closed log saved a checkpoint")
	}
	// A start that finds a call unfinished does not save one until its
	// receipt is written.
	l = mustOpen(t, path)
	if err := l.Append(sentLine("c5")); err != nil {
		t.Fatal(err)
	}
	l.Close()
	l = mustOpen(t, path)
	if saveCheckpoint(t, l) {
		t.Fatal("saved with c5 unfinished from the last run")
	}
	l.writeFile = func([]byte) (int, error) { return 0, errors.New("disk gone") }
	if err := l.Append(lateReceiptLine("c5", fp("s5"))); err == nil {
		t.Fatal("the append did not fail")
	}
	if saveCheckpoint(t, l) {
		t.Fatal("a broken log saved a checkpoint")
	}
}

// TestCheckpointThatDoesNotFit: a checkpoint changed, of another key or
// executor, unreadable, or one the copy no longer fits is ignored, and
// says why; the whole copy is read then, so a change in a line the
// checkpoint covers (even one a start from it would not parse) is still
// refused.
func TestCheckpointThatDoesNotFit(t *testing.T) {
	otherKey := bytes.Repeat([]byte{2}, KeySize)
	for _, tc := range []struct {
		name    string
		spoil   func(t *testing.T, path string)
		why     string
		refused error // the whole read's verdict; nil: the copy opens
	}{
		{"a receipt line it covers changed (one a start from it does not parse)", func(t *testing.T, path string) {
			data := readBytes(t, path)
			i := bytes.Index(data, []byte(`"stub":"`)) + len(`"stub":"`)
			data[i] ^= 1
			writeFile(t, path, data)
		}, "changed since", ErrTampered},
		{"the kind of a line it covers changed", func(t *testing.T, path string) {
			data := readBytes(t, path)
			i := bytes.Index(data, []byte(`"kind":"receipt"`)) + len(`"kind":"`)
			data[i] = 'R'
			writeFile(t, path, data)
		}, "does not read", ErrTampered},
		{"its tag changed", func(t *testing.T, path string) {
			cp := readBytes(t, CheckpointPath(path))
			cp[bytes.Index(cp, []byte(`"lines":`))+8]++
			writeFile(t, CheckpointPath(path), cp)
		}, "tag does not check", nil},
		{"sealed under another key", func(t *testing.T, path string) {
			c := checkpointOf(t, path)
			data, err := c.seal(otherKey, testName)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, CheckpointPath(path), data)
		}, "tag does not check", nil},
		{"of another executor", func(t *testing.T, path string) {
			data, err := checkpointOf(t, path).seal(testKey, "another executor")
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, CheckpointPath(path), data)
		}, `executor "another executor"`, nil},
		{"the copy cut back at a line end", func(t *testing.T, path string) {
			data := readBytes(t, path)
			writeFile(t, path, data[:bytes.LastIndexByte(data[:len(data)-1], '\n')+1])
		}, "taken off the copy's end", nil},
		{"two lines it covers swapped", func(t *testing.T, path string) {
			lines := splitLines(readBytes(t, path))
			lines[3], lines[4] = lines[4], lines[3]
			writeFile(t, path, bytes.Join(lines, nil))
		}, "changed since", ErrTampered},
		{"not canonical", func(t *testing.T, path string) {
			writeFile(t, CheckpointPath(path), []byte("{ }\n"))
		}, "not one canonical JSON line", nil},
		{"too long", func(t *testing.T, path string) {
			writeFile(t, CheckpointPath(path), bytes.Repeat([]byte("x"), maxCheckpoint+1))
		}, "longer than", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tempCopy(t)
			l := mustOpen(t, path)
			if err := l.Append(checkpointLines()...); err != nil {
				t.Fatal(err)
			}
			if !saveCheckpoint(t, l) {
				t.Fatal("no checkpoint")
			}
			l.Close()
			tc.spoil(t, path)
			l, err := Open(path, testKey, testName)
			if tc.refused != nil {
				if !errors.Is(err, tc.refused) {
					t.Fatalf("open: %v, want %v", err, tc.refused)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			if use := l.CheckpointUse(); !strings.HasPrefix(use, "ignored: ") || !strings.Contains(use, tc.why) {
				t.Fatalf("checkpoint use %q, want it ignored because %q", use, tc.why)
			}
		})
	}
}

// checkpointOf reads the checkpoint beside the copy at path.
func checkpointOf(t *testing.T, path string) checkpoint {
	t.Helper()
	c, found, err := readCheckpoint(path, testKey, testName)
	if !found || err != nil {
		t.Fatalf("checkpoint: found %v, %v", found, err)
	}
	return c
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestCheckpointSumIsTheFile: the sum a checkpoint holds is the SHA-256 of
// the copy's bytes, fed at Open and by every write since.
func TestCheckpointSumIsTheFile(t *testing.T) {
	path := tempCopy(t)
	l := mustOpen(t, path)
	if err := l.Append(checkpointLines()...); err != nil {
		t.Fatal(err)
	}
	l.Close()
	l = mustOpen(t, path)
	if err := l.AppendUnsynced(withdrawnLine("c9")); err != nil {
		t.Fatal(err)
	}
	if !saveCheckpoint(t, l) {
		t.Fatal("no checkpoint")
	}
	data := readBytes(t, path)
	c := checkpointOf(t, path)
	if c.Sum != sha256.Sum256(data) || c.Bytes != int64(len(data)) || c.Lines != int64(bytes.Count(data, []byte("\n"))) {
		t.Fatalf("checkpoint %+v does not describe the %d bytes of the copy", c, len(data))
	}
}

// TestRawKind: the kind read from a line's bytes is its parsed kind, for
// every kind the copy writes, whatever text its strings hold.
func TestRawKind(t *testing.T) {
	lines := append(checkpointLines(), hostileSent("c9"))
	tricky := withdrawnLine(`c","kind":"sent`)
	lines = append(lines, tricky)
	kinds := map[Kind]bool{}
	for _, raw := range splitLines(encodeLines(t, testKey, testName, lines...)) {
		ln, lerr := readLine(raw[:len(raw)-1], hmac.New(sha256.New, testKey))
		if lerr != nil {
			t.Fatal(lerr)
		}
		if got := rawKind(raw); got != ln.Kind {
			t.Fatalf("rawKind %q, parsed %q, in %s", got, ln.Kind, raw)
		}
		kinds[ln.Kind] = true
	}
	if len(kinds) < 10 {
		t.Fatalf("only %d kinds tried", len(kinds))
	}
}

// FuzzOpenCheckpoint: no text makes openCheckpoint panic, and any it
// takes seals again to the same text.
func FuzzOpenCheckpoint(f *testing.F) {
	good, err := checkpoint{Lines: 3, Bytes: 900}.seal(testKey, testName)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"bytes":1,"lines":1,"name":"x","sha256":"","tag":"","type":"mcp-executor.copy-checkpoint.v1"}`))
	f.Add([]byte("{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := openCheckpoint(data, testKey, testName)
		if err != nil {
			return
		}
		again, err := c.seal(testKey, testName)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(bytes.TrimSuffix(again, []byte("\n")), bytes.TrimSuffix(data, []byte("\n"))) {
			t.Fatalf("took %q, seals as %q", data, again)
		}
	})
}

// FuzzRawKind: whatever text a line's strings hold, the kind read from the
// bytes the copy writes is the line's own kind.
func FuzzRawKind(f *testing.F) {
	f.Add("order_supplies", "c1", uint8(0))
	f.Add(`x","kind":"sent`, `\"kind\":\"receipt`, uint8(2))
	f.Fuzz(func(t *testing.T, tool, call string, which uint8) {
		var ln Line
		switch which % 4 {
		case 0:
			ln = sentLine(call)
			ln.Tool = tool
		case 1:
			ln = receiptLine(call, fp(tool))
		case 2:
			ln = denialLine(call, fp(tool), "")
			ln.Tool, ln.Reason = tool, tool
		default:
			ln = withdrawnLine(call)
		}
		b, err := ln.body()
		if err != nil {
			return // not a line the copy writes (text that is not UTF-8, …)
		}
		raw, err := (&Log{key: testKey, name: testName}).tagLine(b, 1)
		if err != nil {
			return
		}
		if got := rawKind(raw); got != ln.Kind {
			t.Fatalf("rawKind %q of a %s line %s", got, ln.Kind, raw)
		}
	})
}
