package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
)

func TestVerifyUsage(t *testing.T) {
	e := folder(t, nil)
	bookWithSlip(t, e)
	other := canon.Fingerprint([]byte("another passkey"))
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"no book", []string{"verify", "--trust", e.Thumbprint}, ExitUsage},
		{"no trust", []string{"verify", e.BookPath}, ExitUsage},
		{"two books", []string{"verify", e.BookPath, e.BookPath, "--trust", e.Thumbprint}, ExitUsage},
		{"unknown flag", []string{"verify", e.BookPath, "--trust", e.Thumbprint, "--nope"}, ExitUsage},
		{"trust not a thumbprint", []string{"verify", e.BookPath, "--trust", "abc"}, ExitUsage},
		{"help", []string{"verify", "-h"}, ExitOK},
		{"flags before the book", []string{"verify", "--trust", e.Thumbprint, e.BookPath}, ExitOK},
		{"two trusted keys", []string{"verify", e.BookPath, "--trust", other, "--trust", e.Thumbprint}, ExitOK},
		{"untrusted issuer", []string{"verify", e.BookPath, "--trust", other}, ExitFinding},
		{"unreadable file", []string{"verify", filepath.Join(e.Dir, "none.jsonl"), "--trust", e.Thumbprint}, ExitFinding},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errOut)
			}
		})
	}
}

func TestVerifyIntactBook(t *testing.T) {
	e := folder(t, nil)
	s0 := stub(t, e, 0, "", "call-1")
	s1 := stub(t, e, 1, s0.Stub.Fingerprint, "call-2")
	bookWithSlip(t, e, s0, s1)

	code, out, errOut := run(t, "verify", e.BookPath, "--trust", e.Thumbprint)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if first := lines(out)[0]; !strings.Contains(first, ": intact; every stub is within its slip") {
		t.Errorf("summary line: %q", first)
	}
	if !strings.Contains(out, "3 entries: 1 slips, 2 stubs (2 countersigned") {
		t.Errorf("counts missing:\n%s", out)
	}

	code, out, _ = run(t, "verify", e.BookPath, "--trust", e.Thumbprint, "--json")
	if code != ExitOK {
		t.Fatalf("--json: exit %d\n%s", code, out)
	}
	v := oneObject(t, out)
	if v["intact"] != true || v["withinSlips"] != true {
		t.Errorf("intact/withinSlips: %v %v", v["intact"], v["withinSlips"])
	}
	counts, _ := v["counts"].(map[string]any)
	if counts["slips"] != 1.0 || counts["stubs"] != 2.0 || counts["countersigned"] != 2.0 {
		t.Errorf("counts: %v", counts)
	}
	for _, k := range []string{"problems", "breaches"} {
		if l, ok := v[k].([]any); !ok || len(l) != 0 {
			t.Errorf("%s: %v, want an empty list", k, v[k])
		}
	}
}

// TestVerifyTamperedLine changes one character of the second stub's payload: the problem is reported
// at line 3 with its code, in both outputs, and the exit code is 1.
func TestVerifyTamperedLine(t *testing.T) {
	e := folder(t, nil)
	s0 := stub(t, e, 0, "", "call-1")
	s1 := stub(t, e, 1, s0.Stub.Fingerprint, "call-2")
	bookWithSlip(t, e, s0, s1)
	text, err := os.ReadFile(e.BookPath)
	if err != nil {
		t.Fatal(err)
	}
	ls := bytes.Split(bytes.TrimSuffix(text, []byte("\n")), []byte("\n"))
	if len(ls) != 3 {
		t.Fatalf("book has %d lines", len(ls))
	}
	// The stub's signature: swap one base64url character for another.
	at := bytes.LastIndex(ls[2], []byte(`"signature":"`)) + len(`"signature":"`) + 5
	if ls[2][at] == 'A' {
		ls[2][at] = 'B'
	} else {
		ls[2][at] = 'A'
	}
	if err := os.WriteFile(e.BookPath, append(bytes.Join(ls, []byte("\n")), '\n'), 0o644); err != nil {
		t.Fatal(err)
	}

	code, out, _ := run(t, "verify", e.BookPath, "--trust", e.Thumbprint)
	if code != ExitFinding {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	if first := lines(out)[0]; !strings.Contains(first, "NOT intact") {
		t.Errorf("summary line: %q", first)
	}
	if !strings.Contains(out, "problem at line 3: signature-invalid: ") {
		t.Errorf("the tampered line is not named:\n%s", out)
	}

	code, out, _ = run(t, "verify", e.BookPath, "--trust", e.Thumbprint, "--json")
	if code != ExitFinding {
		t.Fatalf("--json: exit %d, want 1", code)
	}
	v := oneObject(t, out)
	if v["intact"] != false {
		t.Errorf("intact: %v", v["intact"])
	}
	problems, _ := v["problems"].([]any)
	found := false
	for _, p := range problems {
		m := p.(map[string]any)
		if m["line"] == 3.0 && m["code"] == "signature-invalid" && m["message"] != "" {
			found = true
		}
		if m["line"] != 3.0 {
			t.Errorf("a problem on another line: %v", m)
		}
	}
	if !found {
		t.Errorf("no signature-invalid problem at line 3: %v", problems)
	}
}

func TestVerifyUnreadableJSON(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := run(t, "verify", filepath.Join(dir, "missing.jsonl"), "--trust", canon.Fingerprint([]byte("k")), "--json")
	if code != ExitFinding {
		t.Fatalf("exit %d, want 1", code)
	}
	v := oneObject(t, out)
	if v["intact"] != false || v["error"] == "" {
		t.Errorf("answer: %v", v)
	}
	if !strings.Contains(errOut, "missing.jsonl") {
		t.Errorf("stderr does not name the file: %s", errOut)
	}
}
