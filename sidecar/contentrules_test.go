package sidecar_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/sidecar/contentrules"
)

const rulesFile = `{
  "version": 1,
  "rules": [
    {
      "name": "the scan setting in settings.json stays off",
      "tool": "echo",
      "when": { "pointer": "/path", "matches": "**settings.json" },
      "content": { "pointer": "/content", "as": "json" },
      "test": { "pointer": "/scan", "equals": false, "orAbsent": true }
    }
  ]
}`

// rulesOptions writes the rules file into a folder the settings read it
// from, and returns its fingerprint.
func rulesFingerprint(t *testing.T) string {
	t.Helper()
	rs, err := contentrules.Parse([]byte(rulesFile))
	if err != nil {
		t.Fatal(err)
	}
	return rs.Fingerprint()
}

// Rules on content: a call a rule refuses, or whose content it cannot read
// exactly, is never sent and gets a denial; an allowed call's stub names
// the rules file.
func TestContentRules(t *testing.T) {
	rfp := rulesFingerprint(t)
	o, record := serverOpts(t, "sdk", baseOptions())
	if err := os.WriteFile(filepath.Join(o.Dir, "rules.json"), []byte(rulesFile), 0o600); err != nil {
		t.Fatal(err)
	}
	o.Settings = map[string]any{"contentRules": "rules.json"}
	o.Software = []map[string]any{{"name": "Content rules of test executor", "sha256": rfp}}
	env, err := devsetup.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	h := launch(t, env)
	h.record = record
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := h.client(ctx)
	cases := []struct {
		args    map[string]any
		refused string
	}{
		{map[string]any{"path": "C:\\proj\\settings.json", "content": `{"scan": true}`}, "content-rule"},
		{map[string]any{"path": "proj/settings.json", "content": `{"scan": false}`}, ""},
		{map[string]any{"path": "notes.txt", "content": "not json"}, ""},
		{map[string]any{"path": "proj/settings.json", "content": `{"scan": false, "SCAN": true}`}, "content-unreadable"},
		{map[string]any{"path": "proj/settings.json", "content": `not json`}, "content-unreadable"},
	}
	allowed := 0
	for i, c := range cases {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: c.args})
		if err != nil {
			t.Fatal(err)
		}
		if c.refused == "" {
			allowed++
			if res.IsError {
				t.Errorf("case %d refused: %+v", i, res.Content[0])
			}
			continue
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if !res.IsError || res.Meta["red.prova/refused"] != c.refused || res.Meta["red.prova/rule"] != "the scan setting in settings.json stays off" {
			t.Errorf("case %d: %v %q %v", i, res.IsError, text, res.Meta)
		}
		if !strings.HasPrefix(text, `Not taken by the executor: Content rule "the scan setting in settings.json stays off": `) || strings.Contains(text, "true") {
			t.Errorf("case %d text %q", i, text)
		}
	}
	cs.Close()
	h.exitCode()
	if got := receivedCalls(t, record); len(got) != allowed {
		t.Errorf("the server received %d calls, %d were allowed", len(got), allowed)
	}
	h.checkBook()
	entries := readBook(t, env.BookPath)
	for _, s := range entriesOf(entries, "stub") {
		if detailsOf(s.Content)["executor.rules"] != rfp {
			t.Errorf("a stub does not name the rules file")
		}
	}
	if n := len(entriesOf(entries, "refusal")); n != 3 {
		t.Errorf("%d denials", n)
	}
	for _, l := range readCopy(t, env.CopyPath, env.CopyKey, "test executor") {
		if l.Kind == copylog.KindDenial && (l.Rules != rfp || l.Rule != canon.Fingerprint([]byte("the scan setting in settings.json stays off"))) {
			t.Errorf("copy denial line rules %q rule %q", l.Rules, l.Rule)
		}
	}
}

// A slip that states rules on content stops a start without them, or with
// other rules.
func TestContentRulesTheSlipStates(t *testing.T) {
	rfp := rulesFingerprint(t)
	for _, tc := range []struct {
		name     string
		withFile bool
		stated   string
		want     string
	}{
		{"no rules file", false, rfp, "name no contentRules file"},
		{"other rules", true, canon.Fingerprint([]byte("other")), "approved other rules"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, _ := serverOpts(t, "sdk", baseOptions())
			if tc.withFile {
				if err := os.WriteFile(filepath.Join(o.Dir, "rules.json"), []byte(rulesFile), 0o600); err != nil {
					t.Fatal(err)
				}
				o.Settings = map[string]any{"contentRules": "rules.json"}
			}
			o.Software = []map[string]any{{"name": "Content rules of test executor", "sha256": tc.stated}}
			env, err := devsetup.Build(o)
			if err != nil {
				t.Fatal(err)
			}
			h := launch(t, env)
			if code := h.exitCode(); code == 0 {
				t.Fatal("the executor started")
			}
			if !strings.Contains(h.stderr.String(), tc.want) {
				t.Errorf("stderr lacks %q:\n%s", tc.want, h.stderr.String())
			}
		})
	}
}
