package sidecar_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/keys"
)

// The start refuses a slip that is not for the keys held, or not signed
// by a trusted passkey.
func TestStartChecksTheSlip(t *testing.T) {
	cases := []struct {
		name   string
		change func(t *testing.T, env *devsetup.Env)
		want   string
	}{
		{"other agent keys", func(t *testing.T, env *devsetup.Env) {
			writeFile(t, env.AgentKeys, keys.NewSeeds().Marshal())
		}, "other agent keys"},
		{"executor keys not in with", func(t *testing.T, env *devsetup.Env) {
			writeFile(t, env.ExecutorKeys, keys.NewSeeds().Marshal())
		}, "does not hold the executor's keys"},
		{"untrusted passkey", func(t *testing.T, env *devsetup.Env) {
			var s map[string]any
			data, _ := os.ReadFile(env.SettingsPath)
			if err := json.Unmarshal(data, &s); err != nil {
				t.Fatal(err)
			}
			s["agent"].(map[string]any)["issuerKeys"] = []string{fp("someone else")}
			out, _ := json.Marshal(s)
			writeFile(t, env.SettingsPath, out)
		}, "issuer-not-expected"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o, _ := serverOpts(t, "sdk", baseOptions())
			env, err := devsetup.Build(o)
			if err != nil {
				t.Fatal(err)
			}
			tc.change(t, env)
			h := launch(t, env)
			if code := h.exitCode(); code == 0 {
				t.Fatal("the executor started")
			}
			if !strings.Contains(h.stderr.String(), tc.want) {
				t.Errorf("stderr lacks %q:\n%s", tc.want, h.stderr.String())
			}
			if data, _ := os.ReadFile(env.BookPath); len(data) != 0 {
				t.Errorf("the book was written")
			}
		})
	}
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
