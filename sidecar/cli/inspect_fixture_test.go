package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// Helpers of the tests of verify, keys, check and compare.

// secretValue is a credential value the tests look for in every output: it must never appear.
const secretValue = "RECOGNISABLE-credential-7f3a9c"

// folder builds a working folder whose tool server is this test binary (echo and slow tools), with
// two credentials: one from a file, one from the environment (both secretValue).
func folder(t *testing.T, edit func(o *devsetup.Options)) *devsetup.Env {
	t.Helper()
	dir := t.TempDir()
	credFile := filepath.Join(dir, "secrets", "files-token")
	if err := os.MkdirAll(filepath.Dir(credFile), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(credFile, []byte(secretValue+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MCP_EXECUTOR_TEST_TOKEN", secretValue)
	o := devsetup.Options{
		Dir:     dir,
		Command: testServerCommand(t),
		Env: map[string]map[string]any{
			testServerEnv: {"value": "1"},
			"FILES_TOKEN": {"file": "secrets/files-token"},
			"API_TOKEN":   {"env": "MCP_EXECUTOR_TEST_TOKEN"},
		},
		Tools: map[string]devsetup.Tool{"echo": {Action: "provared.data.read"}, "slow": {Action: "provared.data.read"}},
	}
	if edit != nil {
		edit(&o)
	}
	e, err := devsetup.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// run runs the command in-process and returns its exit code, stdout and stderr.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(context.Background(), Env{Args: args, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, Version: "test"})
	for _, s := range []string{out.String(), errOut.String()} {
		if strings.Contains(s, secretValue) {
			t.Fatalf("%v: a credential value appears in the output:\n%s", args, s)
		}
	}
	return code, out.String(), errOut.String()
}

// oneObject decodes text as exactly one JSON object.
func oneObject(t *testing.T, text string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(text))
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, text)
	}
	if dec.More() {
		t.Fatalf("more than one JSON value on stdout:\n%s", text)
	}
	return v
}

// bookWithSlip writes a book holding the env's slip (line 1) and the stubs given (lines 2, 3, …).
func bookWithSlip(t *testing.T, e *devsetup.Env, stubs ...book.Line) {
	t.Helper()
	b, err := book.OpenBook(e.BookPath, book.Options{IssuerKeys: []string{e.Thumbprint}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Append(book.Line{Slip: e.Slip.Record}); err != nil {
		t.Fatal(err)
	}
	for i, s := range stubs {
		if err := b.Append(s); err != nil {
			t.Fatalf("stub %d: %v", i, err)
		}
	}
}

// stub signs a countersigned stub for call under the env's slip, as the executor writes one.
func stub(t *testing.T, e *devsetup.Env, seq int64, previous, call string) book.Line {
	t.Helper()
	ctx := context.Background()
	when := canon.FormatTime(time.Now().UTC())
	c := map[string]any{
		"type": "provared.stub.v0", "id": canon.NewID(), "slip": e.Slip.Fingerprint, "seq": seq,
		"action": "provared.data.read", "with": "executor", "when": when,
		"details": []any{map[string]any{"name": "executor.call", "sha256": canon.Fingerprint([]byte(call))}},
	}
	if seq > 0 {
		c["previous"] = previous
	}
	s, err := record.Sign(ctx, "stub", c, e.Agent)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := record.Sign(ctx, "countersignature", map[string]any{"type": "provared.countersignature.v0", "stub": s.Fingerprint, "when": when}, e.Executor)
	if err != nil {
		t.Fatal(err)
	}
	return book.Line{Stub: s, Countersignature: cs}
}

// snapshot is every file under dir with its mode and the hash of its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		sum := ""
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h := sha256.Sum256(b)
			sum = hex.EncodeToString(h[:])
		}
		out[p] = fmt.Sprintf("%v %s", info.Mode(), sum)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameSnapshot(t *testing.T, before, after map[string]string) {
	t.Helper()
	for p, v := range before {
		if after[p] != v {
			t.Errorf("%s changed: %q -> %q", p, v, after[p])
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s was made", p)
		}
	}
}

// lines splits a command's output into its lines.
func lines(s string) []string { return strings.Split(strings.TrimRight(s, "\n"), "\n") }
