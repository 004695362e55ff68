package devsetup

import (
	"context"
	"os"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/keys"
)

// With SealKeys, the folder holds a recorder's key set that the keys
// package reads back as the same keys; without, none.
func TestSealKeys(t *testing.T) {
	e, err := Build(Options{Dir: t.TempDir(), Command: "true", Tools: map[string]Tool{"t": {Action: "tool.t"}}, SealKeys: true})
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(e.SealKeys)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("the seal key file: %v %v", info, err)
	}
	s, err := keys.LoadSealKeySet(context.Background(), e.SealKeys, "", keys.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Keys().Equal(e.Sealer.Keys()) {
		t.Fatal("the seal keys read back differ")
	}
	plain, err := Build(Options{Dir: t.TempDir(), Command: "true", Tools: map[string]Tool{"t": {Action: "tool.t"}}})
	if err != nil {
		t.Fatal(err)
	}
	if plain.SealKeys != "" || plain.Sealer != nil {
		t.Fatal("seal keys made without being asked for")
	}
}
