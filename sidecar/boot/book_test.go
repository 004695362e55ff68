package boot

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
)

// devFolder builds a development working folder (one tool, the dev
// passkey's slip) and loads its settings and its slip.
func devFolder(t *testing.T) (*devsetup.Env, *settings.Settings, *slip.Slip) {
	t.Helper()
	e, err := devsetup.Build(devsetup.Options{Dir: t.TempDir(), Command: "/bin/true",
		Tools: map[string]devsetup.Tool{"echo": {Action: "provared.data.read"}}})
	if err != nil {
		t.Fatal(err)
	}
	set, _, err := settings.Load(e.SettingsPath)
	if err != nil {
		t.Fatal(err)
	}
	sl, err := LoadSlip(set, e.Agent.Keys(), e.Executor.Keys())
	if err != nil {
		t.Fatal(err)
	}
	return e, set, sl
}

// TestAddSlip: the slip is added once; a start that finds it in the book adds nothing; the slip is found
// by the book reader when it is not the first line.
func TestAddSlip(t *testing.T) {
	e, _, sl := devFolder(t)
	if sl.Fingerprint != e.Slip.Fingerprint {
		t.Fatalf("LoadSlip read %s, want %s", sl.Fingerprint, e.Slip.Fingerprint)
	}
	for range 2 {
		bk, err := book.OpenBook(e.BookPath, book.Options{IssuerKeys: []string{e.Thumbprint}})
		if err != nil {
			t.Fatal(err)
		}
		if err := AddSlip(bk, sl); err != nil {
			t.Fatal(err)
		}
		if got := bk.Ledger().Size(); got != 1 {
			t.Errorf("%d entries, want 1", got)
		}
		bk.Close()
	}
	there, err := inBook(e.BookPath, book.KindSlip, sl.Fingerprint)
	if err != nil || !there {
		t.Errorf("inBook: %v, %v", there, err)
	}
	if there, err := inBook(e.BookPath, book.KindSlip, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"); err != nil || there {
		t.Errorf("inBook of another slip: %v, %v", there, err)
	}
	if there, err := inBook(e.BookPath, book.KindCancellation, sl.Fingerprint); err != nil || there {
		t.Errorf("inBook of the slip as another kind: %v, %v", there, err)
	}
	if _, err := inBook(e.BookPath+".none", book.KindSlip, sl.Fingerprint); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing book: %v", err)
	}
}
