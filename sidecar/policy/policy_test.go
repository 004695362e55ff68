package policy

import (
	"bytes"
	"errors"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/sidecar/policy/glob"
	"github.com/seed-6e06167c/mcp-executor/sidecar/policy/quota"
	"github.com/seed-6e06167c/mcp-executor/sidecar/policy/redact"
	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
)

// The quota windows at a start are those of the copy's sent lines: calls
// that left the window do not count, calls within it do, lines of other
// kinds and tools without a windowed quota are not counted. (Here on
// lines dated in the past; TestMultiServersQuota waits for a real minute
// to pass through the binary, once.)
func TestQuotaRestore(t *testing.T) {
	set := &settings.Settings{
		Tools: map[string]settings.Tool{
			"fs.search_files": {Action: "a", Quota: &quota.Limits{PerMinute: 3}},
			"fs.*":            {Action: "a", Quota: &quota.Limits{PerRun: 1}},
			"ev.*":            {Action: "a", Quota: &quota.Limits{PerHour: 2}},
		},
		ToolOrder: []string{"fs.search_files", "fs.*", "ev.*"},
	}
	now := time.Now()
	sent := func(tool string, age time.Duration) copylog.Line {
		return copylog.Line{Kind: copylog.KindSent, Tool: tool, When: now.Add(-age)}
	}
	for _, c := range []struct {
		name    string
		lines   []copylog.Line
		tool    string
		refused string // the quota error's Per, "" when allowed
		counted int
	}{
		{"out of the window", []copylog.Line{sent("fs.search_files", 61*time.Second), sent("fs.search_files", 61*time.Second), sent("fs.search_files", 61*time.Second)}, "fs.search_files", "", 3},
		{"within the window", []copylog.Line{sent("fs.search_files", 30*time.Second), sent("fs.search_files", 40*time.Second), sent("fs.search_files", 59*time.Second)}, "fs.search_files", "minute", 3},
		{"two within", []copylog.Line{sent("fs.search_files", 30*time.Second), sent("fs.search_files", 61*time.Second), sent("fs.search_files", 40*time.Second)}, "fs.search_files", "", 3},
		{"denials do not count", []copylog.Line{{Kind: copylog.KindDenial, Tool: "fs.search_files", When: now}, {Kind: copylog.KindDenial, Tool: "fs.search_files", When: now}, {Kind: copylog.KindDenial, Tool: "fs.search_files", When: now}}, "fs.search_files", "", 0},
		{"per run is per process", []copylog.Line{sent("fs.read_file", time.Second)}, "fs.read_file", "", 0},
		{"a glob's hour", []copylog.Line{sent("ev.echo", 59*time.Minute), sent("ev.echo", time.Minute), sent("ev.add", time.Minute)}, "ev.echo", "hour", 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			rules, err := glob.NewRules(set.ToolOrder)
			if err != nil {
				t.Fatal(err)
			}
			p := &Policy{set: set, rules: rules, quotas: quota.NewTracker()}
			seed, err := NewSeed(set, now)
			if err != nil {
				t.Fatal(err)
			}
			for _, ln := range c.lines {
				if err := seed.Visit(ln); err != nil {
					t.Fatal(err)
				}
			}
			if n := p.restoreQuotas(slices.Values(seed.sent), now); n != c.counted {
				t.Errorf("counted %d, want %d", n, c.counted)
			}
			r, ok := p.Rule(c.tool)
			if !ok {
				t.Fatal("no rule")
			}
			res, err := p.quotas.Reserve(c.tool, *r.Quota)
			var ex *quota.ExceededError
			switch {
			case c.refused == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.refused != "" && (!errors.As(err, &ex) || ex.Per != c.refused):
				t.Fatalf("got %v, want a full %s", err, c.refused)
			case res != nil:
				res.Release()
			}
		})
	}
}

// Exact beats glob, then the longest literal part, then file order; a
// refuse rule is found like any other.
func TestToolRuleResolve(t *testing.T) {
	set := &settings.Settings{
		Tools: map[string]settings.Tool{
			"*": {Action: "any"}, "fs.*": {Action: "fs"}, "fs.read_*": {Action: "read"},
			"fs.read_secret": {Refuse: true}, "*.read_file": {Action: "rf"},
		},
		ToolOrder: []string{"*", "fs.*", "fs.read_*", "fs.read_secret", "*.read_file"},
	}
	rules, err := glob.NewRules(set.ToolOrder)
	if err != nil {
		t.Fatal(err)
	}
	p := &Policy{set: set, rules: rules}
	for name, want := range map[string]string{
		"fs.read_text_file": "glob:fs.read_*", "fs.read_file": "glob:*.read_file", "fs.read_secret": "exact", "fs.write_file": "glob:fs.*",
		"ev.read_file": "glob:*.read_file", "ev.echo": "glob:*",
	} {
		r, ok := p.Rule(name)
		if !ok || r.Decision.Label() != want {
			t.Errorf("%s: %v %q, want %q", name, ok, r.Decision.Label(), want)
		}
	}
	if r, _ := p.Rule("fs.read_secret"); !r.Refuse {
		t.Error("fs.read_secret: the refuse rule is not the one found")
	}
}

// Redact shows a secret as a token an auditor can check with the salt
// the copy keeps; other values stay.
func TestRedact(t *testing.T) {
	salt := redact.NewSalt()
	r, err := redact.New(salt, redact.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := &Policy{redactor: r}
	secret := "sk-proj-" + strings.Repeat("Ab1", 12)
	got := string(p.Redact([]byte(`{"path":"/data/key.txt","content":"api_key=` + secret + `"}`)))
	if strings.Contains(got, secret) || !strings.Contains(got, `"path":"/data/key.txt"`) {
		t.Fatalf("Redact = %s", got)
	}
	i := strings.Index(got, "[REDACTED:")
	j := strings.Index(got[i:], "]")
	if i < 0 || j < 0 || !redact.Verify(salt, secret, got[i:i+j+1]) {
		t.Fatalf("no token the salt verifies in %s", got)
	}
	if txt := p.Redact([]byte("not json Bearer " + secret)); strings.Contains(string(txt), secret) {
		t.Fatalf("Redact on text = %s", txt)
	}
}

// At a start the policy takes the copy's salt (one is written to a copy
// that holds none, and the next start takes that one), and replaceBuiltin
// is warned about in the log.
func TestNewSaltAndWarning(t *testing.T) {
	path := filepath.Join(t.TempDir(), "copy.jsonl")
	key := bytes.Repeat([]byte{3}, 32)
	open := func(o redact.Options) (*Policy, string) {
		t.Helper()
		var logs bytes.Buffer
		set := &settings.Settings{Redaction: o}
		seed, err := NewSeed(set, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		// The copy opened as the start opens it: the seed takes its lines.
		cp, err := copylog.OpenWith(path, key, "test executor", copylog.Visit{Kinds: seed.Kinds(), Each: seed.Visit})
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := cp.Close(); err != nil {
				t.Error(err)
			}
		}()
		p, err := New(set, seed, cp, slog.New(slog.NewJSONHandler(&logs, nil)))
		if err != nil {
			t.Fatal(err)
		}
		return p, logs.String()
	}
	p1, logs := open(redact.Options{})
	if strings.Contains(logs, "built-in detectors") {
		t.Errorf("warned without replaceBuiltin: %s", logs)
	}
	p2, logs := open(redact.Options{Extend: []string{`\bACME-[0-9]{6}\b`}, ReplaceBuiltin: true})
	if !strings.Contains(logs, "redaction: the built-in detectors of secrets are off") || !strings.Contains(logs, `"level":"WARN"`) {
		t.Errorf("replaceBuiltin not warned about: %s", logs)
	}
	if !bytes.Equal(p1.redactor.Salt(), p2.redactor.Salt()) {
		t.Error("the second start did not take the copy's salt")
	}
	salts := 0
	lines, err := copylog.ReadFile(path, key, "test executor")
	if err != nil {
		t.Fatal(err)
	}
	for _, ln := range lines {
		if ln.Kind == copylog.KindRedactionSalt {
			salts++
		}
	}
	if salts != 1 {
		t.Errorf("%d salt lines in the copy, want 1", salts)
	}
}
