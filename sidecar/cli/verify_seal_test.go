package cli

import (
	"bytes"
	"encoding/json"
	"encoding/pem"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/internal/tsatest"
)

var updateVerify = flag.Bool("update-verify", false, "rewrite the verify golden files in testdata")

// sealedBooks are the books with seals that receipts/book's tests made once
// (receipts/book/testdata/sealed-books.json): signed seals, and stamps of
// tsatest's made-up services A and B.
type sealedBooks struct {
	Issuer, Sealer, ServiceA, ServiceB string
	Sealed, Dated                      string
}

func loadSealedBooks(t *testing.T) sealedBooks {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "receipts", "book", "testdata", "sealed-books.json"))
	if err != nil {
		t.Fatal(err)
	}
	var b sealedBooks
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Fatal(err)
	}
	return b
}

func writeBook(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "book.jsonl")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// goldenVerify runs verify and compares what it prints (the book's path
// written BOOK) with testdata/NAME.golden.
func goldenVerify(t *testing.T, name string, wantCode int, args ...string) string {
	t.Helper()
	code, out, errOut := run(t, args...)
	if code != wantCode {
		t.Fatalf("%s: exit %d, want %d\n%s%s", name, code, wantCode, out, errOut)
	}
	out = strings.ReplaceAll(out, args[1], "BOOK")
	golden := filepath.Join("testdata", name+".golden")
	if *updateVerify {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update-verify to write it)", err)
	}
	if out != string(want) {
		t.Errorf("%s: the output differs from %s:\n%s", name, golden, out)
	}
	return out
}

func TestVerifySealed(t *testing.T) {
	b := loadSealedBooks(t)
	path := writeBook(t, b.Sealed)
	out := goldenVerify(t, "verify-sealed", ExitOK, "verify", path, "--trust", b.Issuer, "--sealer", b.Sealer, "--stamp-service", b.ServiceA)
	if !strings.Contains(out, "sealed: the first 5 entries existed by 2026-11-01T10:04:00Z (service "+b.ServiceA) ||
		!strings.Contains(out, "not counted: the time-stamp of "+b.ServiceB) {
		t.Fatalf("the report does not say what the seals show:\n%s", out)
	}
	goldenVerify(t, "verify-sealed-both", ExitOK, "verify", path, "--trust", b.Issuer, "--stamp-service", b.ServiceA, "--stamp-service", b.ServiceB)
	js := goldenVerify(t, "verify-sealed-json", ExitOK, "verify", path, "--trust", b.Issuer, "--sealer", b.Sealer, "--stamp-service", b.ServiceA, "--json")
	v := oneObject(t, js)
	if s, _ := v["sealed"].(map[string]any); s == nil || s["entries"] != 5.0 {
		t.Fatalf("--json sealed: %v", v["sealed"])
	}
	// Another recorder expected: each seal is a problem, named by line.
	other := strings.Repeat("A", 43)
	out = goldenVerify(t, "verify-sealer-not-expected", ExitFinding, "verify", path, "--trust", b.Issuer, "--sealer", other, "--stamp-service", b.ServiceA)
	if !strings.Contains(out, "problem at line 4: sealer-not-expected") || !strings.Contains(out, "problem at line 6: sealer-not-expected") {
		t.Fatalf("%s", out)
	}
	// A service named by its certificate in a PEM file.
	a, _ := tsatest.New(bytes.Repeat([]byte{0x0a}, 32))
	pemPath := filepath.Join(t.TempDir(), "a.pem")
	if err := os.WriteFile(pemPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: a.Certificate()}), 0o644); err != nil {
		t.Fatal(err)
	}
	code, viaPEM, _ := run(t, "verify", path, "--trust", b.Issuer, "--sealer", b.Sealer, "--stamp-service", pemPath)
	if code != ExitOK || !strings.Contains(viaPEM, "(service "+b.ServiceA) {
		t.Fatalf("--stamp-service as a PEM file: exit %d\n%s", code, viaPEM)
	}
}

// Each tampering the seals show, found and named by line.
func TestVerifySealTampering(t *testing.T) {
	b := loadSealedBooks(t)
	ls := strings.Split(strings.TrimSuffix(b.Sealed, "\n"), "\n")
	join := func(l []string) string { return strings.Join(l, "\n") + "\n" }
	removed := append(append([]string(nil), ls[:3]...), ls[4:]...)
	changed := append([]string(nil), ls...)
	changed[1] = ls[2]
	cases := []struct {
		name, text, want string
	}{
		{"verify-seal-mismatch", join(changed), "problem at line 4: seal-mismatch"},
		{"verify-seal-chain-broken", join(removed), "problem at line 5: seal-chain-broken"},
		{"verify-dated-after-stamp", b.Dated, "problem at line 2: dated-after-stamp"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := goldenVerify(t, c.name, ExitFinding, "verify", writeBook(t, c.text), "--trust", b.Issuer, "--stamp-service", b.ServiceA)
			if !strings.Contains(out, c.want) {
				t.Fatalf("%s missing:\n%s", c.want, out)
			}
		})
	}
}

func TestVerifySealUsage(t *testing.T) {
	b := loadSealedBooks(t)
	path := writeBook(t, b.Sealed)
	for name, args := range map[string][]string{
		"a sealer that is not a fingerprint": {"verify", path, "--trust", b.Issuer, "--sealer", "abc"},
		"a service that is neither":          {"verify", path, "--trust", b.Issuer, "--stamp-service", "/nonexistent.pem"},
		"a file with no certificate":         {"verify", path, "--trust", b.Issuer, "--stamp-service", path},
	} {
		if code, _, _ := run(t, args...); code != ExitUsage {
			t.Errorf("%s: exit %d, want %d", name, code, ExitUsage)
		}
	}
}
