package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/keys"
	"github.com/seed-6e06167c/mcp-executor/keys/kube"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/sidecar/contentrules"
	"github.com/seed-6e06167c/mcp-executor/sidecar/report"
)

// freshFolder is a working folder without the key files and the copy key: what keys must make.
func freshFolder(t *testing.T, edit func(o *devsetup.Options)) *devsetup.Env {
	t.Helper()
	e := folder(t, edit)
	for _, p := range []string{e.AgentKeys, e.ExecutorKeys, e.CopyKeyPath} {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func TestKeysMakesMissingKeysAndPrintsThePermission(t *testing.T) {
	e := freshFolder(t, nil)
	code, out, errOut := run(t, "keys", "--config", e.SettingsPath, "--json")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, p := range []string{e.AgentKeys, e.ExecutorKeys, e.CopyKeyPath} {
		info, err := os.Stat(p)
		if err != nil {
			t.Fatalf("%s was not made: %v", p, err)
		}
		if info.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", p, info.Mode().Perm())
		}
	}
	agent, err := keys.LoadKeySet(t.Context(), keys.KeySetSpec{Source: e.AgentKeys}, e.Dir, keys.Options{})
	if err != nil {
		t.Fatal(err)
	}
	exec, err := keys.LoadKeySet(t.Context(), keys.KeySetSpec{Source: e.ExecutorKeys}, e.Dir, keys.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkNoPrivate(t, out+errOut, e.AgentKeys, e.ExecutorKeys, e.CopyKeyPath)

	v := oneObject(t, out)
	if len(v) != 3 {
		t.Errorf("members: %v, want agent, with, requires", keysOf(v))
	}
	a := v["agent"].(map[string]any)
	if _, has := a["software"]; has {
		t.Errorf("software printed without content rules: %v", a["software"])
	}
	if got := keySet(t, a["keys"]); !got.Equal(agent.Keys()) {
		t.Errorf("agent.keys are not the agent key set made")
	}
	w := v["with"].(map[string]any)
	if w["id"] != "executor" || w["name"] != "test executor" {
		t.Errorf("with: id %v name %v", w["id"], w["name"])
	}
	if got := keySet(t, w["keys"]); !got.Equal(exec.Keys()) {
		t.Errorf("with.keys are not the executor key set made")
	}
	req, _ := json.Marshal(v["requires"])
	if string(req) != `[{"need":"countersignature"}]` {
		t.Errorf("requires: %s", req)
	}

	// A second run keeps the keys.
	before := snapshot(t, e.Dir)
	code, out2, _ := run(t, "keys", "--config", e.SettingsPath, "--json")
	if code != ExitOK || out2 != out {
		t.Fatalf("second run: exit %d, output changed:\n%s\n%s", code, out, out2)
	}
	sameSnapshot(t, before, snapshot(t, e.Dir))
}

func TestKeysStatesContentRules(t *testing.T) {
	rules := filepath.Join("..", "contentrules", "testdata", "content-rules.example.json")
	abs, err := filepath.Abs(rules)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := contentrules.Load(abs)
	if err != nil {
		t.Fatal(err)
	}
	e := freshFolder(t, func(o *devsetup.Options) {
		o.Settings = map[string]any{"contentRules": abs}
		o.Tools = map[string]devsetup.Tool{"write_file": {Action: "provared.data.change"}, "edit_file": {Action: "provared.data.change"}}
	})
	code, out, errOut := run(t, "keys", "--config", e.SettingsPath, "--json")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	v := oneObject(t, out)
	sw, _ := json.Marshal(v["agent"].(map[string]any)["software"])
	want := `[{"name":"Content rules of test executor","sha256":"` + rs.Fingerprint() + `"}]`
	if string(sw) != want {
		t.Errorf("software: %s, want %s", sw, want)
	}
}

func TestKeysHumanOutput(t *testing.T) {
	e := freshFolder(t, nil)
	code, out, errOut := run(t, "keys", "--config", e.SettingsPath)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	checkNoPrivate(t, out+errOut, e.AgentKeys, e.ExecutorKeys, e.CopyKeyPath)
	for _, want := range []string{"agent keys: made now", "executor keys: made now", "copy key: made now",
		"agent.keys: ", "with: ", "requires: ", `[{"need":"countersignature"}]`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Each part is one explaining line and one line of JSON.
	ls := lines(out)
	for i, l := range ls {
		if strings.HasPrefix(l, "with: ") {
			var w map[string]any
			if i+1 >= len(ls) || json.Unmarshal([]byte(ls[i+1]), &w) != nil || w["id"] != "executor" {
				t.Errorf("the line after %q is not the with entry", l)
			}
		}
	}
}

func TestKeysUsageAndFaults(t *testing.T) {
	e := folder(t, nil)
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"no config", []string{"keys"}, ExitUsage},
		{"extra argument", []string{"keys", "--config", e.SettingsPath, "more"}, ExitUsage},
		{"missing settings", []string{"keys", "--config", filepath.Join(e.Dir, "none.json")}, ExitFinding},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if code, out, errOut := run(t, tc.args...); code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, out, errOut)
			}
		})
	}
	// A key set from an environment variable that is not set cannot be made: exit 1, nothing on stdout
	// with --json.
	t.Run("env source missing", func(t *testing.T) {
		settingsEdit(t, e.SettingsPath, func(s map[string]any) {
			s["agent"].(map[string]any)["keys"] = "env:MCP_EXECUTOR_TEST_NO_SUCH_KEYS"
		})
		code, out, errOut := run(t, "keys", "--config", e.SettingsPath, "--json")
		if code != ExitFinding || out != "" {
			t.Fatalf("exit %d stdout %q, want 1 and nothing", code, out)
		}
		if !strings.Contains(errOut, "agent keys") || !strings.Contains(errOut, "MCP_EXECUTOR_TEST_NO_SUCH_KEYS") {
			t.Errorf("stderr does not say which key set and source:\n%s", errOut)
		}
	})
}

// settingsEdit rewrites a settings file through edit.
func settingsEdit(t *testing.T, path string, edit func(map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	edit(s)
	if b, err = json.MarshalIndent(s, "", "  "); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// checkNoPrivate fails when any seed of the key-set files, or the copy key, appears in text.
func checkNoPrivate(t *testing.T, text string, keySets ...string) {
	t.Helper()
	for _, p := range keySets {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]string
		if json.Unmarshal(b, &doc) != nil {
			doc = map[string]string{"copy key": strings.TrimSpace(string(b))}
		}
		for name, secret := range doc {
			if secret != "" && strings.Contains(text, secret) {
				t.Errorf("%s of %s appears in the output", name, p)
			}
		}
	}
	if strings.Contains(text, `"d":`) {
		t.Errorf("a private JWK member appears in the output")
	}
}

func keySet(t *testing.T, v any) jwk.KeySet {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	cv, err := canon.Parse(mustJCS(t, b))
	if err != nil {
		t.Fatal(err)
	}
	ks, err := jwk.CheckKeySet(cv)
	if err != nil {
		t.Fatalf("not a key set of [Ed25519, ML-DSA-87]: %v", err)
	}
	return ks
}

func mustJCS(t *testing.T, b []byte) []byte {
	t.Helper()
	out, err := canon.JCS(b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func keysOf(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestKeysManifestsNameOneApplyCommand checks what keys says about Secrets to apply: the one
// command that applies the file it wrote, never a second, different one (the merged manifest is
// applied once), and never the value the manifest holds. The report is built here because a
// Kubernetes Secret source needs an API server (the integration test runs keys against one).
func TestKeysManifestsNameOneApplyCommand(t *testing.T) {
	value := "0123456789abcdef0123456789abcdef0123456"
	m := func(key string, exists bool) *keys.ManifestNeeded {
		return &keys.ManifestNeeded{Namespace: "agents", Name: "mcp-executor-keys", Key: key, SecretExists: exists,
			Manifest: kube.SecretManifest("agents", "mcp-executor-keys", key, []byte(value+key))}
	}
	rep := &report.KeysReport{
		Agent:   report.KeyMade{What: "agent keys", Err: m("agent", true)},
		CopyKey: report.KeyMade{What: "copy key", Err: m("copy", true)},
	}
	path := filepath.Join(t.TempDir(), "secrets.yaml")
	var out strings.Builder
	if err := writeManifests(&out, path, rep); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if n := strings.Count(text, "kubectl apply"); n != 1 || !strings.Contains(text, "kubectl apply --server-side -f "+path) {
		t.Errorf("want exactly one apply command, for %s; got %d in:\n%s", path, n, text)
	}
	for _, key := range []string{"agent", "copy"} {
		if !strings.Contains(text, "mcp-executor-keys key "+key) {
			t.Errorf("the missing key %s is not named:\n%s", key, text)
		}
	}
	if strings.Contains(text, value) {
		t.Error("a value the manifest holds appears in the output")
	}
}
