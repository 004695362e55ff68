package record

import (
	"context"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
)

// ownKeys is misbehavingSigner saying whether it signs with its own keys.
type ownKeys struct {
	misbehavingSigner
	own bool
}

func (o ownKeys) SignsWithOwnKeys() bool { return o.own }

// TestSignTrustsOwnKeys: what a signer holding its keys in this process signs is not verified
// again (sign once, trust once), so even a corrupted signature from one that says so is written;
// one that says it does not hold them is checked like any signer elsewhere, and refused.
func TestSignTrustsOwnKeys(t *testing.T) {
	corrupt := misbehavingSigner{Signer: testSigner, corrupt: jwk.Ed25519}
	r, err := Sign(context.Background(), Stub, stubContent(), ownKeys{corrupt, true})
	if err != nil {
		t.Fatalf("a signer with its own keys: %v", err)
	}
	if VerifyHybrid(r, testSigner.Keys()) == nil {
		t.Fatal("the corrupted signature checks: the test signs nothing wrong")
	}
	if _, err := Sign(context.Background(), Stub, stubContent(), ownKeys{corrupt, false}); err == nil {
		t.Fatal("a signer without its own keys was trusted")
	}
	if !signsWithOwnKeys(testSigner) {
		t.Fatal("a LocalSigner is not trusted")
	}
}
