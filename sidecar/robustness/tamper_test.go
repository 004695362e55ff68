package robustness_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/keys"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
)

// goldenRun makes the records every tampering case starts from: four
// calls answered and one refused, in this order:
//
//	copy: start, sent, receipt, sent, receipt, sent, receipt, denial, sent, receipt
//	book: slip, stub, stub, stub, refusal, stub
func goldenRun(t *testing.T) (*devsetup.Env, string) {
	t.Helper()
	env, record := newEnv(t, "hostile", nil)
	x := start(t, executorBin, env)
	x.initialize()
	for i, tool := range []string{"echo", "echo", "echo", "notinslip", "echo"} {
		id := `"g` + string(rune('1'+i)) + `"`
		x.send(callLine(id, tool, `{}`))
		wantResult(t, x.recv(), id)
	}
	if code := x.stop(); code != 0 {
		t.Fatalf("golden run exit %d", code)
	}
	checkRecords(t, env, record)
	if k := copyKinds(readCopy(t, env)); k["sent"] != 4 || k["receipt"] != 4 || k["denial"] != 1 {
		t.Fatalf("golden copy %v", k)
	}
	return env, record
}

// cloneEnv copies a working folder (its settings name their files relative
// to it) so that each case tampers with its own.
func cloneEnv(t *testing.T, env *devsetup.Env) *devsetup.Env {
	t.Helper()
	dir := t.TempDir()
	err := filepath.WalkDir(env.Dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(env.Dir, path)
		to := filepath.Join(dir, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o700)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(to, data, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	c := *env
	move := func(p string) string { return filepath.Join(dir, strings.TrimPrefix(p, env.Dir)) }
	c.Dir, c.SettingsPath, c.SlipPath, c.BookPath = dir, move(env.SettingsPath), move(env.SlipPath), move(env.BookPath)
	c.CopyPath, c.CopyKeyPath, c.AgentKeys, c.ExecutorKeys = move(env.CopyPath), move(env.CopyKeyPath), move(env.AgentKeys), move(env.ExecutorKeys)
	return &c
}

// editLines rewrites a file's lines (without their LFs).
func editLines(t *testing.T, path string, edit func(lines [][]byte) [][]byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	lines = edit(lines)
	out := bytes.Join(lines, []byte("\n"))
	if len(lines) > 0 {
		out = append(out, '\n')
	}
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
}

func without(lines [][]byte, i int) [][]byte {
	return append(append([][]byte(nil), lines[:i]...), lines[i+1:]...)
}

// Tampering with the copy: each change is named by `compare` (exit 1), and
// the executor does not start on a copy that cannot be read, saying why.
// Whole lines cut from the end are not seen in the copy itself; compare
// names them through the book.
func TestTamperedCopy(t *testing.T) {
	golden, _ := goldenRun(t)
	cases := []struct {
		name   string
		tamper func(t *testing.T, env *devsetup.Env)
		says   []string // what compare's report says
		starts bool     // the executor still starts (the change is not seen in the copy alone)
		why    string   // what the executor says when it does not start; "" = the last of says
	}{
		{"a byte changed", func(t *testing.T, env *devsetup.Env) {
			editLines(t, env.CopyPath, func(l [][]byte) [][]byte {
				l[2] = bytes.Replace(l[2], []byte(`"call":"provared-`), []byte(`"call":"provaree-`), 1)
				return l
			})
		}, []string{"line 3", "changed"}, false, ""},
		{"a line removed", func(t *testing.T, env *devsetup.Env) {
			editLines(t, env.CopyPath, func(l [][]byte) [][]byte { return without(l, 3) })
		}, []string{"line 4", "taken out"}, false, ""},
		{"a line repeated", func(t *testing.T, env *devsetup.Env) {
			editLines(t, env.CopyPath, func(l [][]byte) [][]byte {
				return append(l[:4:4], append([][]byte{l[3]}, l[4:]...)...)
			})
		}, []string{"line 5", "put twice"}, false, ""},
		{"a line moved", func(t *testing.T, env *devsetup.Env) {
			editLines(t, env.CopyPath, func(l [][]byte) [][]byte {
				l[3], l[4] = l[4], l[3]
				return l
			})
		}, []string{"line 4", "moved"}, false, ""},
		{"the end cut in a line", func(t *testing.T, env *devsetup.Env) {
			data, err := os.ReadFile(env.CopyPath)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(env.CopyPath, data[:len(data)-20], 0o600); err != nil {
				t.Fatal(err)
			}
			// line 1 is the redaction salt. compare names the cut line; the
			// executor starts, as on a copy cut at a line end: the cut bytes
			// are kept aside (TestRestartAfterTornCopyWrite).
		}, []string{"line 11", "cut"}, true, ""},
		{"the last call cut off at whole lines", func(t *testing.T, env *devsetup.Env) {
			editLines(t, env.CopyPath, func(l [][]byte) [][]byte { return l[:len(l)-2] })
		}, []string{"unknown receipt", "book line 6"}, true, ""},
		{"the last receipt line cut off", func(t *testing.T, env *devsetup.Env) {
			editLines(t, env.CopyPath, func(l [][]byte) [][]byte { return l[:len(l)-1] })
		}, []string{"sent without receipt", "book line 6"}, true, ""},
		{"the wrong key", func(t *testing.T, env *devsetup.Env) {
			if err := os.WriteFile(env.CopyKeyPath, keys.NewCopyKey(), 0o600); err != nil {
				t.Fatal(err)
			}
		}, []string{"no line checks under the copy key"}, false, ""},
		{"the key missing", func(t *testing.T, env *devsetup.Env) {
			os.Remove(env.CopyKeyPath)
		}, []string{"the copy key must exist"}, false, "no copy key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := cloneEnv(t, golden)
			c.tamper(t, env)
			compareFails(t, env, c.says)
			if vc, vout := verifyBook(t, env); vc != 0 {
				t.Errorf("verify exit %d: the book was not touched:\n%s", vc, vout)
			}
			if c.starts {
				return
			}
			keyBefore, _ := os.ReadFile(env.CopyKeyPath)
			x := start(t, executorBin, env)
			if code := x.wait(); code == 0 {
				t.Errorf("the executor started on a copy that cannot be read")
			}
			want := c.why
			if want == "" {
				want = c.says[len(c.says)-1]
			}
			if why := startFailure(x); !strings.Contains(why, want) {
				t.Errorf("the executor does not say why it does not start: want %q in %q", want, why)
			}
			if keyAfter, _ := os.ReadFile(env.CopyKeyPath); !bytes.Equal(keyBefore, keyAfter) {
				t.Errorf("the executor wrote a new copy key (%d bytes, was %d) beside a copy that holds lines: "+
					"the seed says it does not start when the key is missing while the copy holds lines; "+
					"a new key makes every later start and compare say the key is wrong", len(keyAfter), len(keyBefore))
			}
		})
	}
}

// changeStub changes a stub's content (its tool-result fingerprint) and
// writes it back without a valid signature, as someone without the keys
// would.
func changeStub(t *testing.T, line []byte) []byte {
	t.Helper()
	v, err := canon.Parse(line)
	if err != nil {
		t.Fatal(err)
	}
	env := v.(map[string]any)["stub"].(map[string]any)
	raw, err := canon.UnB64(env["payload"].(string))
	if err != nil {
		t.Fatal(err)
	}
	c, err := canon.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range c.(map[string]any)["details"].([]any) {
		m := d.(map[string]any)
		if m["name"] == labelToolResult {
			m["sha256"] = fp("another result")
		}
	}
	env["payload"] = canon.B64(canon.MustMarshal(c))
	return canon.MustMarshal(v)
}

// Tampering with the book: compare names each (exit 1); verify says where
// the book itself shows it.
func TestTamperedBook(t *testing.T) {
	golden, _ := goldenRun(t)
	cases := []struct {
		name     string
		tamper   func(t *testing.T, env *devsetup.Env)
		says     []string
		verifyOK bool // the book alone still checks
	}{
		{"the last receipt removed", func(t *testing.T, env *devsetup.Env) {
			editLines(t, env.BookPath, func(l [][]byte) [][]byte { return l[:5] })
		}, []string{"missing: call"}, true},
		{"a receipt in the middle removed", func(t *testing.T, env *devsetup.Env) {
			editLines(t, env.BookPath, func(l [][]byte) [][]byte { return without(l, 2) })
		}, []string{"missing: call"}, false},
		{"a receipt changed", func(t *testing.T, env *devsetup.Env) {
			editLines(t, env.BookPath, func(l [][]byte) [][]byte {
				l[1] = changeStub(t, l[1])
				return l
			})
		}, []string{"differs: call"}, false},
		{"a denial removed", func(t *testing.T, env *devsetup.Env) {
			editLines(t, env.BookPath, func(l [][]byte) [][]byte { return without(l, 4) })
		}, []string{"denial missing: call"}, true},
		{"a foreign receipt added", func(t *testing.T, env *devsetup.Env) {
			// Another executor with the same keys and book but a copy of its
			// own writes a well-signed, countersigned receipt the copy
			// compared does not know.
			own := env.CopyPath
			setCopyPath(t, env, filepath.Join(env.Dir, "other-copy.jsonl"))
			x := start(t, executorBin, env)
			x.initialize()
			x.send(callLine("1", "echo", `{}`))
			wantResult(t, x.recv(), "1")
			x.stop()
			setCopyPath(t, env, own)
		}, []string{"unknown receipt: book line 7"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := cloneEnv(t, golden)
			c.tamper(t, env)
			compareFails(t, env, c.says)
			vc, vout := verifyBook(t, env)
			if c.verifyOK && vc != 0 {
				t.Errorf("verify exit %d, want 0 (the book alone checks):\n%s", vc, vout)
			}
			if !c.verifyOK && (vc != 1 || !strings.Contains(vout, "NOT intact")) {
				t.Errorf("verify exit %d, want 1 and NOT intact:\n%s", vc, vout)
			}
		})
	}
}

// compareFails runs `compare` on env and checks that it exits 1 and names each of says.
func compareFails(t *testing.T, env *devsetup.Env, says []string) {
	t.Helper()
	code, out := compare(t, env)
	t.Logf("compare says:\n%s", out)
	if code != 1 {
		t.Errorf("compare exit %d, want 1:\n%s", code, out)
	}
	for _, s := range says {
		if !strings.Contains(out, s) {
			t.Errorf("compare does not say %q:\n%s", s, out)
		}
	}
}
