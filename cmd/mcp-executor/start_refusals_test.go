package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
)

// TestTypoInASharedActionStopsTheSettings: a rule whose action begins
// "provared." but is not a shared action (provared.data.write) stops the
// settings, for the start and for check alike, with the 30 shared names
// and the advice to use one's own prefix. So the executor never runs
// under it, and no call is ever refused as slip-not-sound for a typo in
// the settings (which blamed the person's permission): the call path
// cannot be reached with such an action.
func TestTypoInASharedActionStopsTheSettings(t *testing.T) {
	e, err := devsetup.Build(devsetup.Options{Dir: t.TempDir(), Command: os.Args[0],
		Tools: map[string]devsetup.Tool{"write": {Action: "provared.data.write"}}, Actions: []string{"provared.data.read"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"stdio", "--config", e.SettingsPath},
		{"serve", "--config", e.SettingsPath, "--listen", "unix:" + filepath.Join(e.Dir, "s.sock")},
		{"check", "--config", e.SettingsPath},
		{"tools", "--config", e.SettingsPath},
	} {
		code, out, errOut := runBin(t, e.Dir, args...)
		text := out + errOut
		if code != 1 || !strings.Contains(text, `tools.write.action: "provared.data.write" is not one of the 30 shared actions`) ||
			!strings.Contains(text, "provared.data.change") || !strings.Contains(text, "a prefix of your own") {
			t.Errorf("%s exits %d:\n%s", args[0], code, text)
		}
		if strings.Contains(text, "slip-not-sound") {
			t.Errorf("%s blames the slip:\n%s", args[0], text)
		}
	}
	if _, err := os.Stat(e.BookPath); !os.IsNotExist(err) {
		t.Errorf("a book was written: %v", err)
	}
}

// TestStartWithoutTrustedPasskey: settings without agent.issuerKeys (the
// first setup before its page step) serve keys, tools and page, while
// stdio, serve and check say what is missing and how to get it.
func TestStartWithoutTrustedPasskey(t *testing.T) {
	e, err := devsetup.Build(devsetup.Options{Dir: t.TempDir(), Command: os.Args[0],
		Env:   map[string]map[string]any{serverRoleEnv: {"value": "sleep"}},
		Tools: map[string]devsetup.Tool{"sleep_5": {Action: "provared.data.read"}}})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(e.SettingsPath)
	if err != nil {
		t.Fatal(err)
	}
	var set map[string]any
	if err := json.Unmarshal(raw, &set); err != nil {
		t.Fatal(err)
	}
	agent, ok := set["agent"].(map[string]any)
	if !ok {
		t.Fatalf("settings without an agent: %s", raw)
	}
	delete(agent, "issuerKeys")
	raw, _ = json.Marshal(set)
	if err := os.WriteFile(e.SettingsPath, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"stdio", "--config", e.SettingsPath},
		{"serve", "--config", e.SettingsPath, "--listen", "unix:" + filepath.Join(e.Dir, "s.sock")},
		{"check", "--config", e.SettingsPath},
	} {
		code, out, errOut := runBin(t, e.Dir, args...)
		text := out + errOut
		if code != 1 || !strings.Contains(text, "agent.issuerKeys") || !strings.Contains(text, "mcp-executor page --config "+e.SettingsPath) ||
			!strings.Contains(text, "thumbprint") {
			t.Errorf("%s exits %d, without saying what is missing and how to get it:\n%s", args[0], code, text)
		}
	}
	for _, c := range []string{"keys", "tools"} {
		if code, out, errOut := runBin(t, e.Dir, c, "--config", e.SettingsPath); code != 0 || len(findingLines(out+"\n"+errOut)) != 0 {
			t.Errorf("%s exits %d:\n%s\n%s", c, code, out, errOut)
		}
	}
	if res := runPage(t, e.SettingsPath, e.Dir); res.code != 0 {
		t.Errorf("page exits %d:\n%s", res.code, res.errOut)
	}
}
