package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/sidecar/contentrules"
)

// itemLines are the report's lines of one level.
func itemLines(out, level string) []string {
	var got []string
	for _, l := range lines(out) {
		if strings.HasPrefix(l, level+":") {
			got = append(got, l)
		}
	}
	return got
}

// has reports whether some line holds every part.
func has(ls []string, parts ...string) bool {
	for _, l := range ls {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(l, p)
		}
		if all {
			return true
		}
	}
	return false
}

func TestCheckAllWell(t *testing.T) {
	e := folder(t, nil)
	s0 := stub(t, e, 0, "", "call-1")
	bookWithSlip(t, e, s0)
	cp, err := copylog.Open(e.CopyPath, e.CopyKey, "test executor")
	if err != nil {
		t.Fatal(err)
	}
	if err := cp.Append(copylog.Line{Kind: copylog.KindStart}); err != nil {
		t.Fatal(err)
	}
	cp.Close()
	before := snapshot(t, e.Dir)

	code, out, errOut := run(t, "check", "--config", e.SettingsPath)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	sameSnapshot(t, before, snapshot(t, e.Dir))
	ok := itemLines(out, "ok")
	for _, want := range [][]string{
		{"settings", "2 tools"},
		{"agent keys", "key set " + e.Agent.Keys().Fingerprint()},
		{"executor keys", "key set " + e.Executor.Keys().Fingerprint()},
		{"copy key", "present"},
		{"copy (executor.copy", "1 lines check"},
		{"slip", "signed by trusted passkey " + e.Thumbprint},
		{"slip", "agent keys held"},
		{"slip", `with entry "executor" holds the executor keys`},
		{"book", "2 entries; no problem"},
		{"tool server", "found"},
		{"credential FILES_TOKEN", "present"},
		{"credential API_TOKEN", "environment variable MCP_EXECUTOR_TEST_TOKEN: present"},
	} {
		if !has(ok, want...) {
			t.Errorf("no ok line with %q:\n%s", want, out)
		}
	}
	if got := itemLines(out, "problem"); len(got) != 0 {
		t.Errorf("problems: %q", got)
	}
	if last := lines(out)[len(lines(out))-1]; !strings.HasPrefix(last, "check: all well") {
		t.Errorf("last line: %q", last)
	}
}

// TestCheckReportsEveryProblem breaks five things at once: each is reported, naming what, where and a
// fix, and nothing in the folder changes.
func TestCheckReportsEveryProblem(t *testing.T) {
	e := folder(t, nil)
	bookWithSlip(t, e)
	if err := os.Remove(e.ExecutorKeys); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(e.Dir, "secrets", "files-token")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.CopyKeyPath, []byte("too short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(e.BookPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("this is not a record\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	other := canon.Fingerprint([]byte("another passkey"))
	settingsEdit(t, e.SettingsPath, func(s map[string]any) {
		s["agent"].(map[string]any)["issuerKeys"] = []string{other}
	})
	before := snapshot(t, e.Dir)

	code, out, errOut := run(t, "check", "--config", e.SettingsPath)
	if code != ExitFinding {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	sameSnapshot(t, before, snapshot(t, e.Dir))
	problems := itemLines(out, "problem")
	for _, want := range [][]string{
		{"executor keys (executor.keys): file " + e.ExecutorKeys, "not there", "to fix: run `mcp-executor keys"},
		{"credential FILES_TOKEN (server.env.FILES_TOKEN): file ", "not there", "to fix:"},
		{"copy key (executor.copyKey", "43 characters", "to fix:"},
		{"slip (agent.slip " + e.SlipPath, "issuer-not-expected", "to fix:", e.Thumbprint},
		{"book (agent.book " + e.BookPath + " line 2)", "to fix:"},
	} {
		if !has(problems, want...) {
			t.Errorf("no problem line with %q:\n%s", want, out)
		}
	}
	if !strings.HasPrefix(lines(out)[len(lines(out))-1], "check: FAIL ") {
		t.Errorf("no verdict at the end:\n%s", out)
	}

	// The same as one JSON object.
	code, out, _ = run(t, "check", "--config", e.SettingsPath, "--json")
	if code != ExitFinding {
		t.Fatalf("--json: exit %d", code)
	}
	v := oneObject(t, out)
	if v["ok"] != false || v["problems"] != float64(len(problems)) {
		t.Errorf("ok %v problems %v, want false and %d", v["ok"], v["problems"], len(problems))
	}
	items, _ := v["items"].([]any)
	for _, it := range items {
		m := it.(map[string]any)
		if m["level"] == "problem" && (m["what"] == "" || m["message"] == "" || m["fix"] == "") {
			t.Errorf("a problem without what, message or fix: %v", m)
		}
	}
}

// TestCheckWritesNothing runs check on a folder whose keys, copy key, copy and book are not made yet:
// it reports the keys missing and makes none of them.
func TestCheckWritesNothing(t *testing.T) {
	e := freshFolder(t, nil)
	before := snapshot(t, e.Dir)
	code, out, _ := run(t, "check", "--config", e.SettingsPath)
	if code != ExitFinding {
		t.Fatalf("exit %d, want 1 (no keys)\n%s", code, out)
	}
	sameSnapshot(t, before, snapshot(t, e.Dir))
	notes := itemLines(out, "note")
	for _, want := range [][]string{{"copy key", "not there yet"}, {"copy (", "not there yet"}, {"book (", "not there yet"}} {
		if !has(notes, want...) {
			t.Errorf("no note with %q:\n%s", want, out)
		}
	}
}

// TestCheckSlipOfAnotherSigner puts a slip written by the reference library (an RS256 passkey, from the
// format's test vectors) in place: its signature and trusted issuer check; what is left is what differs
// from this folder (its agent keys, its with, its valid time).
func TestCheckSlipOfAnotherSigner(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "provared-vectors", "slips.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vectors struct {
		Cases []struct {
			Name   string          `json:"name"`
			Record json.RawMessage `json:"record"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &vectors); err != nil {
		t.Fatal(err)
	}
	var slipText json.RawMessage
	for _, c := range vectors.Cases {
		if c.Name == "a sound slip, signed with RS256" {
			slipText = c.Record
		}
	}
	if slipText == nil {
		t.Fatal("vector not found")
	}
	const issuer = "v6G4u7YiKYmJ10hG_s7P98MHLU6qF_cjjTMgEsJmlGU" // the vector's passkey thumbprint
	e := folder(t, nil)
	if err := os.WriteFile(e.SlipPath, slipText, 0o644); err != nil {
		t.Fatal(err)
	}
	settingsEdit(t, e.SettingsPath, func(s map[string]any) {
		s["agent"].(map[string]any)["issuerKeys"] = []string{issuer}
	})
	_, out, _ := run(t, "check", "--config", e.SettingsPath)
	if !has(itemLines(out, "ok"), "slip", "signed by trusted passkey "+issuer) {
		t.Errorf("the reference library's slip was not accepted:\n%s", out)
	}
	if !has(itemLines(out, "problem"), "slip", "other agent keys") {
		t.Errorf("the agent keys that differ are not reported:\n%s", out)
	}
}

func TestCheckUsage(t *testing.T) {
	for _, args := range [][]string{{"check"}, {"check", "--config"}, {"check", "--config", "x.json", "extra"}, {"check", "--bad"}} {
		if code, _, _ := run(t, args...); code != ExitUsage {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
	code, out, _ := run(t, "check", "--config", filepath.Join(t.TempDir(), "none.json"))
	if code != ExitFinding || !strings.HasPrefix(out, "problem: settings") {
		t.Errorf("missing settings: exit %d\n%s", code, out)
	}
}

// TestCheckContentRulesAgainstTheSlip: check reads the rules file and says whether the slip states it.
func TestCheckContentRulesAgainstTheSlip(t *testing.T) {
	abs, err := filepath.Abs(filepath.Join("..", "contentrules", "testdata", "content-rules.example.json"))
	if err != nil {
		t.Fatal(err)
	}
	rs, err := contentrules.Load(abs)
	if err != nil {
		t.Fatal(err)
	}
	stating := func(fp string) []map[string]any {
		return []map[string]any{{"name": "Content rules of test executor", "sha256": fp}}
	}
	tests := []struct {
		name     string
		rules    bool
		software []map[string]any
		level    string
		parts    []string
	}{
		{"stated", true, stating(rs.Fingerprint()), "ok", []string{"content rules", "the slip states these rules"}},
		{"not stated", true, nil, "warning", []string{"content rules", "does not state these rules"}},
		{"other rules stated", true, stating(canon.Fingerprint([]byte("other"))), "problem", []string{"content rules", "not among it", "to fix:"}},
		{"stated but no rules file", false, stating(rs.Fingerprint()), "problem", []string{"content rules (contentRules)", "name no contentRules file", "to fix:"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := folder(t, func(o *devsetup.Options) {
				o.Tools = map[string]devsetup.Tool{"write_file": {Action: "provared.data.change"}, "edit_file": {Action: "provared.data.change"}}
				o.Software = tc.software
				if tc.rules {
					o.Settings = map[string]any{"contentRules": abs}
				}
			})
			_, out, _ := run(t, "check", "--config", e.SettingsPath)
			if !has(itemLines(out, tc.level), tc.parts...) {
				t.Errorf("no %s line with %q:\n%s", tc.level, tc.parts, out)
			}
			if tc.rules && !has(itemLines(out, "ok"), "content rules", "2 rules read; fingerprint "+rs.Fingerprint()) {
				t.Errorf("the rules read are not reported:\n%s", out)
			}
		})
	}
}

// TestCheckWarnsOfAnOpenApprovalQueue: a queue folder others may write is
// a warning naming the folder and the fix (whoever writes it can approve a
// held call); check still passes, and writes nothing.
func TestCheckWarnsOfAnOpenApprovalQueue(t *testing.T) {
	e := folder(t, nil)
	bookWithSlip(t, e, stub(t, e, 0, "", "call-1"))
	queue := filepath.Join(e.Dir, "approvals")
	if err := os.Mkdir(queue, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(queue, 0o777); err != nil { // past the umask
		t.Fatal(err)
	}
	before := snapshot(t, e.Dir)
	code, out, errOut := run(t, "check", "--config", e.SettingsPath)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	sameSnapshot(t, before, snapshot(t, e.Dir))
	if !has(itemLines(out, "warning"), "approval queue", "approvals.queue "+queue, "mode 0777", "can approve a held call", "chmod 0700 "+queue) {
		t.Errorf("no warning of the open queue folder:\n%s", out)
	}
	if err := os.Chmod(queue, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, out, _ := run(t, "check", "--config", e.SettingsPath); strings.Contains(out, "approval queue") {
		t.Errorf("a 0700 queue folder is warned about:\n%s", out)
	}
}
