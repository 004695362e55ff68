package report

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/keys"
	"github.com/seed-6e06167c/mcp-executor/keys/kube"
	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/receipt"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
)

// inspectBook writes a working folder and a book: the slip (line 1) and one countersigned stub per
// call (lines 2, 3, …) naming rules when rules is not "".
func inspectBook(t testing.TB, rules string, calls ...string) (*devsetup.Env, []byte) {
	t.Helper()
	e, err := devsetup.Build(devsetup.Options{Dir: t.TempDir(), Command: "/bin/true",
		Tools: map[string]devsetup.Tool{"echo": {Action: "provared.data.read"}}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := book.OpenBook(e.BookPath, book.Options{IssuerKeys: []string{e.Thumbprint}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Append(book.Line{Slip: e.Slip.Record}); err != nil {
		t.Fatal(err)
	}
	prev := ""
	for i, call := range calls {
		when := canon.FormatTime(time.Now().UTC())
		details := []any{map[string]any{"name": receipt.LabelCall, "sha256": canon.Fingerprint([]byte(call))}}
		if rules != "" {
			details = append(details, map[string]any{"name": receipt.LabelRules, "sha256": rules})
		}
		c := map[string]any{"type": "provared.stub.v0", "id": canon.NewID(), "slip": e.Slip.Fingerprint, "seq": int64(i),
			"action": "provared.data.read", "with": "executor", "when": when, "details": details}
		if i > 0 {
			c["previous"] = prev
		}
		s, err := record.Sign(context.Background(), "stub", c, e.Agent)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := record.Sign(context.Background(), "countersignature",
			map[string]any{"type": "provared.countersignature.v0", "stub": s.Fingerprint, "when": when}, e.Executor)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Append(book.Line{Stub: s, Countersignature: cs}); err != nil {
			t.Fatal(err)
		}
		prev = s.Fingerprint
	}
	text, err := os.ReadFile(e.BookPath)
	if err != nil {
		t.Fatal(err)
	}
	return e, text
}

// TestCheckSaysWhetherTheSlipIsInTheBook: check's book line says when the
// settings' slip is not in the book yet (a new slip, which the next start
// adds), from the same reading that checks the book, and says nothing of
// it when the book holds it.
func TestCheckSaysWhetherTheSlipIsInTheBook(t *testing.T) {
	e, _ := inspectBook(t, "", "a", "b")
	bookLine := func() string {
		t.Helper()
		rep := CheckSetup(context.Background(), CheckOptions{ConfigPath: e.SettingsPath})
		for _, it := range rep.Items {
			if it.What == "book" {
				if it.Level != LevelOK {
					t.Fatalf("book: %+v", it)
				}
				return it.Message
			}
		}
		t.Fatalf("no book line: %+v", rep.Items)
		return ""
	}
	if msg := bookLine(); msg != "3 entries; no problem" {
		t.Errorf("the book holds the slip: %q", msg)
	}
	// A new slip from the same passkey: the book holds only the old one.
	if _, err := devsetup.WriteSlip(e, devsetup.Options{Tools: map[string]devsetup.Tool{"echo": {Action: "provared.data.read"}}}, "executor"); err != nil {
		t.Fatal(err)
	}
	if msg := bookLine(); msg != "3 entries; no problem; the slip is not in it yet: the next start adds it" {
		t.Errorf("the book holds an older slip: %q", msg)
	}
}

func TestInspectRulesInRecords(t *testing.T) {
	stated, other := canon.Fingerprint([]byte("stated")), canon.Fingerprint([]byte("other"))
	entries := []book.FileEntry{
		{Kind: book.KindSlip, Software: []slip.Software{{Name: receipt.RulesSoftwareName("x"), SHA256: stated}}},
		{Kind: book.KindStub, With: "executor", Details: []record.Detail{{Name: receipt.LabelRules, SHA256: stated}}},
		{Kind: book.KindStub, With: "executor", Details: []record.Detail{{Name: receipt.LabelRules, SHA256: stated}}},
		{Kind: book.KindStub, With: "someone else", Details: []record.Detail{{Name: receipt.LabelRules, SHA256: other}}},
		{Kind: book.KindStub, With: "executor"},
	}
	lines := []copylog.Line{
		{Kind: copylog.KindDenial, Rules: other},
		{Kind: copylog.KindDenial, Rules: ""},
		{Kind: copylog.KindSent},
	}
	c, err := copylog.CompareLines(copylog.SliceLines(lines), copylog.BookView{}, copylog.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := rulesInRecords("executor", entries, c.DenialRules)
	want := map[string]RulesUse{
		stated: {SHA256: stated, Receipts: 2, Denials: 0, Stated: true},
		other:  {SHA256: other, Receipts: 0, Denials: 1, Stated: false},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for _, g := range got {
		if g != want[g.SHA256] {
			t.Errorf("%+v, want %+v", g, want[g.SHA256])
		}
	}
}

// TestInspectSecretManifests merges the manifests of two keys of one Secret into one document, so that
// one server-side apply holds both.
func TestInspectSecretManifests(t *testing.T) {
	ms := []*keys.ManifestNeeded{
		{Namespace: "agents", Name: "executor-keys", Key: "agent", Manifest: kube.SecretManifest("agents", "executor-keys", "agent", []byte("A"))},
		{Namespace: "agents", Name: "copy", Key: "key", Manifest: kube.SecretManifest("agents", "copy", "key", []byte("C"))},
		{Namespace: "agents", Name: "executor-keys", Key: "executor", Manifest: kube.SecretManifest("agents", "executor-keys", "executor", []byte("E"))},
	}
	out, err := SecretManifests(ms)
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(string(out), "---\n")
	if len(docs) != 2 {
		t.Fatalf("%d documents, want 2:\n%s", len(docs), out)
	}
	want := []struct {
		name string
		data map[string]any
	}{{"copy", map[string]any{"key": "C"}}, {"executor-keys", map[string]any{"agent": "A", "executor": "E"}}}
	for i, d := range docs {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(d), &m); err != nil {
			t.Fatal(err)
		}
		meta := m["metadata"].(map[string]any)
		data := m["stringData"].(map[string]any)
		if meta["name"] != want[i].name || meta["namespace"] != "agents" || m["kind"] != "Secret" || len(data) != len(want[i].data) {
			t.Errorf("document %d: %v", i, m)
		}
		for k, v := range want[i].data {
			if data[k] != v {
				t.Errorf("document %d: stringData[%s] = %v, want %v", i, k, data[k], v)
			}
		}
	}
}

// TestInspectCheckNeverMakesKeys: CheckSetup on a folder without keys reports them and makes nothing.
func TestInspectCheckNeverMakesKeys(t *testing.T) {
	e, _ := inspectBook(t, "")
	for _, p := range []string{e.AgentKeys, e.CopyKeyPath} {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	rep := CheckSetup(context.Background(), CheckOptions{ConfigPath: e.SettingsPath})
	if rep.OK() {
		t.Fatalf("OK without agent keys: %+v", rep.Items)
	}
	for _, p := range []string{e.AgentKeys, e.CopyKeyPath, e.CopyPath} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s was made", filepath.Base(p))
		}
	}
}
