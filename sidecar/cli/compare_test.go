package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/internal/syncbuf"
	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/receipt"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// copyOf writes the executor's copy for calls whose stubs are given (a sent line and a receipt line
// each) and returns the open log, which holds the copy's exclusive lock as a running executor does.
func copyOf(t *testing.T, e *devsetup.Env, calls []string, stubs []book.Line) *copylog.Log {
	t.Helper()
	cp, err := copylog.Open(e.CopyPath, e.CopyKey, "test executor")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cp.Close() })
	for i, call := range calls {
		sent := copylog.Line{Kind: copylog.KindSent, Call: call, Tool: "echo", Action: "provared.data.read",
			Slip: e.Slip.Fingerprint, RequestID: call,
			Details: []record.Detail{{Name: "executor.call", SHA256: canon.Fingerprint([]byte(call))}}}
		received := copylog.Line{Kind: copylog.KindReceipt, Call: call, Stub: stubs[i].Stub.Fingerprint,
			Outcome: &record.Detail{Name: receipt.LabelToolResult, SHA256: canon.Fingerprint([]byte("result"))}}
		if err := cp.Append(sent, received); err != nil {
			t.Fatal(err)
		}
	}
	return cp
}

func TestCompareAgreesWhileTheCopyIsLocked(t *testing.T) {
	e := folder(t, nil)
	s0 := stub(t, e, 0, "", "call-1")
	s1 := stub(t, e, 1, s0.Stub.Fingerprint, "call-2")
	bookWithSlip(t, e, s0, s1)
	copyOf(t, e, []string{"call-1", "call-2"}, []book.Line{s0, s1}) // locked until the test ends
	before := snapshot(t, e.Dir)

	code, out, errOut := run(t, "compare", "--config", e.SettingsPath)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if first := lines(out)[0]; first != "compare: OK 2 calls, 2 match; copy ok; book intact" {
		t.Errorf("summary line: %q", first)
	}
	code, out, _ = run(t, "compare", "--config", e.SettingsPath, "--json")
	if code != ExitOK {
		t.Fatalf("--json: exit %d\n%s", code, out)
	}
	v := oneObject(t, out)
	if v["ok"] != true || v["calls"] != 2.0 || len(v["matches"].([]any)) != 2 || v["bookIntact"] != true {
		t.Errorf("answer: %v", v)
	}
	sameSnapshot(t, before, snapshot(t, e.Dir))
}

// TestCompareFindsAReceiptLeftOut takes the last stub out of the book: the call is missing, the exit
// code is 1 and the summary line says so first.
func TestCompareFindsAReceiptLeftOut(t *testing.T) {
	e := folder(t, nil)
	s0 := stub(t, e, 0, "", "call-1")
	s1 := stub(t, e, 1, s0.Stub.Fingerprint, "call-2")
	bookWithSlip(t, e, s0)
	copyOf(t, e, []string{"call-1", "call-2"}, []book.Line{s0, s1})

	code, out, _ := run(t, "compare", "--config", e.SettingsPath)
	if code != ExitFinding {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	ls := lines(out)
	if ls[0] != "compare: FAIL 2 calls, 1 match, 1 missing; copy ok; book intact" {
		t.Errorf("summary line: %q", ls[0])
	}
	if !has(ls[1:], "missing: call call-2", s1.Stub.Fingerprint) {
		t.Errorf("the missing call is not listed:\n%s", out)
	}
	_, out, _ = run(t, "compare", "--config", e.SettingsPath, "--json")
	v := oneObject(t, out)
	missing, _ := v["missing"].([]any)
	if v["ok"] != false || len(missing) != 1 || missing[0].(map[string]any)["call"] != "call-2" {
		t.Errorf("answer: %v", v)
	}
}

func TestCompareBookWithAProblem(t *testing.T) {
	e := folder(t, nil)
	s0 := stub(t, e, 0, "", "call-1")
	bookWithSlip(t, e, s0)
	copyOf(t, e, []string{"call-1"}, []book.Line{s0})
	other := filepath.Join(e.Dir, "other-book.jsonl")
	text, err := os.ReadFile(e.BookPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, append(text, "not a record\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := run(t, "compare", "--config", e.SettingsPath, "--book", other)
	if code != ExitFinding {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	if !strings.HasPrefix(out, "compare: FAIL 1 call, 1 match; copy ok; book not intact, 1 problem\n") {
		t.Errorf("summary:\n%s", out)
	}
	if !strings.Contains(out, "book problem at line 3: not-json: ") || !strings.Contains(out, "book "+other) {
		t.Errorf("the book's problem or path is not named:\n%s", out)
	}
}

func TestCompareMissingParts(t *testing.T) {
	e := folder(t, nil)
	bookWithSlip(t, e)
	if err := copyOf(t, e, nil, nil).Append(copylog.Line{Kind: copylog.KindStart}); err != nil {
		t.Fatal(err)
	}

	t.Run("usage", func(t *testing.T) {
		for _, args := range [][]string{{"compare"}, {"compare", "--config", e.SettingsPath, "x"}, {"compare", "--nope"}} {
			if code, _, _ := run(t, args...); code != ExitUsage {
				t.Errorf("%q: exit %d, want 2", args, code)
			}
		}
	})
	t.Run("named book missing", func(t *testing.T) {
		code, out, errOut := run(t, "compare", "--config", e.SettingsPath, "--book", filepath.Join(e.Dir, "none.jsonl"), "--json")
		if code != ExitFinding {
			t.Fatalf("exit %d, want 1", code)
		}
		if v := oneObject(t, out); v["ok"] != false || !strings.Contains(v["error"].(string), "none.jsonl") {
			t.Errorf("answer: %v", v)
		}
		if !strings.Contains(errOut, "none.jsonl") {
			t.Errorf("stderr: %s", errOut)
		}
	})
	t.Run("copy key missing", func(t *testing.T) {
		if err := os.Rename(e.CopyKeyPath, e.CopyKeyPath+".away"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := os.Rename(e.CopyKeyPath+".away", e.CopyKeyPath); err != nil {
				t.Error(err)
			}
		})
		code, out, _ := run(t, "compare", "--config", e.SettingsPath)
		if code != ExitFinding || !strings.HasPrefix(out, "compare: FAIL the copy key must exist") {
			t.Fatalf("exit %d\n%s", code, out)
		}
		if _, err := os.Stat(e.CopyKeyPath); !os.IsNotExist(err) {
			t.Errorf("compare made a copy key: %v", err)
		}
	})
	t.Run("copy tampered", func(t *testing.T) {
		text, err := os.ReadFile(e.CopyPath)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(e.CopyPath, bytes.Replace(text, []byte(`"kind":"start"`), []byte(`"kind":"START"`), 1), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := os.WriteFile(e.CopyPath, text, 0o600); err != nil {
				t.Error(err)
			}
		})
		code, out, _ := run(t, "compare", "--config", e.SettingsPath)
		if code != ExitFinding || !strings.HasSuffix(lines(out)[0], "; copy unreadable; book intact") {
			t.Fatalf("exit %d\n%s", code, out)
		}
		// The book is still read and checked when the copy does not verify: its state is the
		// checker's.
		bookText, err := os.ReadFile(e.BookPath)
		if err != nil {
			t.Fatal(err)
		}
		other := filepath.Join(e.Dir, "book-with-a-problem.jsonl")
		if err := os.WriteFile(other, append(bookText, "not a record\n"...), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, _ = run(t, "compare", "--config", e.SettingsPath, "--book", other)
		if code != ExitFinding || !strings.HasSuffix(lines(out)[0], "; copy unreadable; book not intact, 1 problem") ||
			!strings.Contains(out, "book problem at line 2: not-json: ") {
			t.Fatalf("exit %d\n%s", code, out)
		}
	})
}

// TestCompareAfterARealRun runs the built binary as the agent's MCP server (stdio), makes two tool calls
// through it, and compares its copy with its book: they agree. Then the book loses its last line: the
// call is missing.
func TestCompareAfterARealRun(t *testing.T) {
	exe := binary(t)
	e := folder(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "compare-test", Version: "1"}, nil)
	cmd := exec.Command(exe, "stdio", "--config", e.SettingsPath)
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	s, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting: %v\n%s", err, stderr.String())
	}
	for _, text := range []string{"one", secretValue} {
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
		if err != nil || res.IsError {
			t.Fatalf("echo: %v %+v\n%s", err, res, stderr.String())
		}
	}
	s.Close()

	code, out, errOut := run(t, "compare", "--config", e.SettingsPath)
	if code != ExitOK || lines(out)[0] != "compare: OK 2 calls, 2 match; copy ok; book intact" {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	// The same through the binary.
	outB, err := exec.Command(exe, "compare", "--config", e.SettingsPath, "--json").Output()
	if err != nil {
		t.Fatalf("binary compare: %v\n%s", err, outB)
	}
	if strings.Contains(string(outB), secretValue) {
		t.Fatal("a credential value appears in the output of the binary")
	}
	if v := oneObject(t, string(outB)); v["ok"] != true || len(v["matches"].([]any)) != 2 {
		t.Errorf("binary compare --json: %v", v)
	}

	text, err := os.ReadFile(e.BookPath)
	if err != nil {
		t.Fatal(err)
	}
	ls := bytes.SplitAfter(text, []byte("\n"))
	if err := os.WriteFile(e.BookPath, bytes.Join(ls[:len(ls)-2], nil), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ = run(t, "compare", "--config", e.SettingsPath)
	if code != ExitFinding || lines(out)[0] != "compare: FAIL 2 calls, 1 match, 1 missing; copy ok; book intact" {
		t.Fatalf("after cutting the book: exit %d\n%s", code, out)
	}
}
