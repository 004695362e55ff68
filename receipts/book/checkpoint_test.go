package book

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
)

var checkpointKeyForTests = bytes.Repeat([]byte{7}, 32)

// bookWithStubs writes a book of the slip and n stubs with real
// signatures, and returns its path and the checkpoint taken when it was
// closed.
func bookWithStubs(t *testing.T, f *fixture, n int) (string, Checkpoint) {
	t.Helper()
	b, path := openEmpty(t, f)
	if err := b.Append(f.slipLine()); err != nil {
		t.Fatal(err)
	}
	pos := Position{}
	for i := range n {
		p := Proposal{Slip: f.slip.Fingerprint, Action: "tool.a", With: "executor", When: f.start.Add(time.Duration(i+1) * time.Minute)}
		l := f.line(t, pos, p)
		if err := b.Append(l); err != nil {
			t.Fatal(err)
		}
		pos = Position{Seq: pos.Seq + 1, Previous: l.Stub.Fingerprint}
	}
	cp, ok := b.Checkpoint()
	if !ok {
		t.Fatal("no checkpoint of a sound book at rest")
	}
	if cp.Entries != n+1 {
		t.Fatalf("checkpoint names %d entries, want %d", cp.Entries, n+1)
	}
	b.Close()
	return path, cp
}

// countSignatures counts the signatures checked while fn runs.
func countSignatures(t *testing.T, fn func()) int64 {
	t.Helper()
	var n atomic.Int64
	was := checkSignature
	checkSignature = func(k *jwk.Key, input, sig []byte) bool { n.Add(1); return was(k, input, sig) }
	defer func() { checkSignature = was }()
	fn()
	return n.Load()
}

func openWith(t *testing.T, path string, opts Options, cp *Checkpoint) *Book {
	t.Helper()
	opts.Checkpoint = cp
	b, err := OpenBook(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func TestCheckpointSealAndOpen(t *testing.T) {
	cp := Checkpoint{Entries: 12, Bytes: 3456, Root: "cm9vdA", Trust: "dHJ1c3Q"}
	sealed, err := cp.Seal(checkpointKeyForTests)
	if err != nil {
		t.Fatal(err)
	}
	got, err := OpenCheckpoint(sealed, checkpointKeyForTests)
	if err != nil || got != cp {
		t.Fatalf("opened %+v, %v; want %+v", got, err, cp)
	}
	changed := bytes.Replace(sealed, []byte(`"entries":12`), []byte(`"entries":11`), 1)
	other := bytes.Repeat([]byte{8}, 32)
	for name, c := range map[string]struct {
		data, key []byte
	}{
		"a changed member": {changed, checkpointKeyForTests},
		"another key":      {sealed, other},
		"not JSON":         {[]byte("checkpoint"), checkpointKeyForTests},
		"a short key":      {sealed, []byte("short")},
	} {
		if _, err := OpenCheckpoint(c.data, c.key); err == nil {
			t.Errorf("%s: opened", name)
		}
	}
}

func TestCheckpointSparesTheSignaturesItCovers(t *testing.T) {
	f := newFixture(t, nil)
	path, cp := bookWithStubs(t, f, 3)
	full := countSignatures(t, func() { openWith(t, path, f.opts, nil).Close() })
	var b *Book
	spared := countSignatures(t, func() { b = openWith(t, path, f.opts, &cp) })
	if b.CheckpointUse() != "used" {
		t.Fatalf("checkpoint use: %q", b.CheckpointUse())
	}
	if spared >= full {
		t.Fatalf("with a checkpoint %d signatures were checked, without %d", spared, full)
	}
	if err := b.Ledger().Sound(); err != nil {
		t.Fatal(err)
	}
	if b.Ledger().Counts().Stubs != 3 {
		t.Fatalf("counts: %+v", b.Ledger().Counts())
	}
}

// A checkpoint that does not fit the book is ignored with the reason, and
// the whole book is verified: a signature damaged after the checkpoint was
// taken is found.
func TestACheckpointThatLiesIsIgnored(t *testing.T) {
	f := newFixture(t, nil)
	path, cp := bookWithStubs(t, f, 2)
	text := readFile(t, path)
	lines := bytes.Split(bytes.TrimSuffix(text, []byte("\n")), []byte("\n"))
	// Damage the first stub's signature: one character of it changed.
	at := bytes.LastIndex(lines[1], []byte(`"signature":"`)) + len(`"signature":"`) + 5
	c := lines[1][at]
	lines[1][at] = map[bool]byte{true: 'B', false: 'A'}[c == 'A']
	damaged := append(bytes.Join(lines, []byte("\n")), '\n')
	if err := os.WriteFile(path, damaged, 0o644); err != nil {
		t.Fatal(err)
	}
	more := cp
	more.Entries++
	otherTrust := cp
	otherTrust.Trust = "b3RoZXI"
	for name, c := range map[string]struct {
		cp   Checkpoint
		want string
	}{
		"the book was changed":       {cp, "do not have the top fingerprint"},
		"more entries than the book": {more, "names 4 entries and the book holds 3"},
		"other trusted passkeys":     {otherTrust, "other trusted passkeys"},
	} {
		b := openWith(t, path, f.opts, &c.cp)
		if !strings.HasPrefix(b.CheckpointUse(), "ignored: ") || !strings.Contains(b.CheckpointUse(), c.want) {
			t.Errorf("%s: checkpoint use %q, want it ignored with %q", name, b.CheckpointUse(), c.want)
		}
		if err := b.Ledger().Sound(); err == nil || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("%s: the damaged signature was not found: %v", name, err)
		}
		b.Close()
	}
}

// Lines appended after the checkpoint are verified at the next start.
func TestCheckpointTailIsVerified(t *testing.T) {
	f := newFixture(t, nil)
	path, cp := bookWithStubs(t, f, 1)
	// A checkpoint of the slip alone: the stub after it is checked.
	b := openWith(t, path, f.opts, nil)
	text := readFile(t, path)
	first := bytes.IndexByte(text, '\n') + 1
	r := newReader(f.opts, false)
	if _, err := r.readLine(text[:first-1], false); err != nil {
		t.Fatal(err)
	}
	root := r.tree.root()
	short := Checkpoint{Entries: 1, Bytes: int64(first), Root: canon.B64(root[:]), Trust: cp.Trust}
	b.Close()
	path2 := filepath.Join(t.TempDir(), "book.jsonl")
	lines := bytes.SplitAfter(text, []byte("\n"))
	stub := bytes.Replace(lines[1], []byte(`"signature":"`), []byte(`"signature":"AA`), 1)
	if err := os.WriteFile(path2, append(append([]byte{}, lines[0]...), stub...), 0o644); err != nil {
		t.Fatal(err)
	}
	b2 := openWith(t, path2, f.opts, &short)
	if b2.CheckpointUse() != "used" {
		t.Fatalf("checkpoint use %q", b2.CheckpointUse())
	}
	if err := b2.Ledger().Sound(); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("a damaged line after the checkpoint was not found: %v", err)
	}
}

// TestCheckpointOverASpoiledSignature: the signatures of the lines a
// checkpoint covers are not even decoded, so a covered line whose
// signature was changed into text that is not base64url is caught by the
// top fingerprint: the checkpoint is ignored and the book read again,
// which finds the fault.
func TestCheckpointOverASpoiledSignature(t *testing.T) {
	f := newFixture(t, nil)
	path, cp := bookWithStubs(t, f, 3)
	text := readFile(t, path)
	lines := strings.SplitAfter(string(text), "\n")
	i := strings.LastIndex(lines[2], `"}]}`)
	lines[2] = lines[2][:i-1] + "=" + lines[2][i:]
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	b := openWith(t, path, f.opts, &cp)
	if !strings.HasPrefix(b.CheckpointUse(), "ignored") {
		t.Fatalf("checkpoint use %q", b.CheckpointUse())
	}
	if err := b.Ledger().Sound(); err == nil || !strings.Contains(err.Error(), "base64url") {
		t.Fatalf("sound: %v", err)
	}
}

// A covered line is parsed with its hybrid signatures left out (slim.go),
// so text in a signature that the full parse refuses (a control
// character, an escaped quote) does not stop that parse; the top
// fingerprint still catches the change, the checkpoint is ignored, and the
// whole book is read again, which refuses the line.
func TestCheckpointOverSignatureTextTheParseRefuses(t *testing.T) {
	for name, spoil := range map[string]string{"control character": "\x01", "escaped quote": `\"`} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, nil)
			path, cp := bookWithStubs(t, f, 3)
			lines := strings.SplitAfter(string(readFile(t, path)), "\n")
			at := strings.LastIndex(lines[2], `"signature":"`) + len(`"signature":"`) + 3
			lines[2] = lines[2][:at] + spoil + lines[2][at:]
			if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644); err != nil {
				t.Fatal(err)
			}
			cpCopy := cp
			b, err := OpenBook(path, Options{IssuerKeys: f.opts.IssuerKeys, Checkpoint: &cpCopy})
			if err == nil {
				defer b.Close()
				if !strings.HasPrefix(b.CheckpointUse(), "ignored") {
					t.Fatalf("checkpoint use %q", b.CheckpointUse())
				}
				err = b.Ledger().Sound()
			}
			t.Logf("refused: %v", err)
			if err == nil || !strings.Contains(err.Error(), "line 3 of the book") {
				t.Fatalf("the spoiled line was not refused: %v", err)
			}
		})
	}
}

// TestCheckpointGolden: a checkpoint sealed by an earlier executor (the
// golden file, under a key of 32 bytes of 3) still opens, and sealing the
// same state gives the same bytes, so an upgrade keeps the checkpoint.
func TestCheckpointGolden(t *testing.T) {
	golden, err := os.ReadFile(filepath.Join("testdata", "checkpoint-v1.golden"))
	if err != nil {
		t.Fatal(err)
	}
	key := bytes.Repeat([]byte{3}, 32)
	c, err := OpenCheckpoint(golden, key)
	if err != nil {
		t.Fatal(err)
	}
	want := Checkpoint{Entries: 90000, Bytes: 1271144655, Root: "A1sAl43GhsHQriJCor506rsbMeTxB3iXEtFM09W_V0A", Trust: "5QmqjI0AmqQVpV8C_8ntcojTalVYLsPOebs6hsRzPrE"}
	if c != want {
		t.Fatalf("opened %+v, want %+v", c, want)
	}
	again, err := c.Seal(key)
	if err != nil || !bytes.Equal(again, golden) {
		t.Fatalf("sealed %q (%v), want the golden bytes %q", again, err, golden)
	}
}
