package record

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// goldenSigner is a key set from fixed seeds, so that a written stub's
// payload and Ed25519 signature are the same on every run.
func goldenSigner(t *testing.T) *jwk.LocalSigner {
	t.Helper()
	s, err := jwk.NewLocalSigner(bytes.Repeat([]byte{7}, 32), bytes.Repeat([]byte{8}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestGoldenStub keeps a stub written by this package in testdata: the
// record read from the file must verify under the key set made from the
// same seeds, and writing the same content again must give the same
// payload, protected headers and Ed25519 signature (ML-DSA-87 signatures
// are randomised, so that one is only checked).
func TestGoldenStub(t *testing.T) {
	path := filepath.Join("testdata", "stub.golden.json")
	s := goldenSigner(t)
	r, err := Sign(context.Background(), Stub, stubContent(), s)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(path, append(canon.MustMarshal(r.Value()), '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the golden stub (go test -update writes it): %v", err)
	}
	v, err := canon.Parse(bytes.TrimSuffix(text, []byte("\n")))
	if err != nil {
		t.Fatalf("the golden file is not canonical JSON: %v", err)
	}
	golden, err := Parse(v, Stub)
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyHybrid(golden, s.Keys()); err != nil {
		t.Fatalf("the golden stub does not verify: %v", err)
	}
	if golden.Payload != r.Payload ||
		golden.Signatures[0].Protected != r.Signatures[0].Protected ||
		golden.Signatures[0].Signature != r.Signatures[0].Signature ||
		golden.Signatures[1].Protected != r.Signatures[1].Protected {
		t.Fatal("writing the same stub again gives other bytes")
	}
}
