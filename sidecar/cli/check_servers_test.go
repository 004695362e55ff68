package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
)

// severalServers turns the folder's settings into the "servers" form: its
// server as "local" (a stdio server, its credentials kept), and "web", an
// HTTP server whose headers come from files, one of them under a name no
// environment variable could have (X-Api-Key). Its tools are named as the
// client sees them; web's are refused by a rule, and local.write's action
// is one the slip does not allow. The file is written as JSON or, with
// asYAML, as YAML beside it; its path is returned.
func severalServers(t *testing.T, e *devsetup.Env, asYAML bool) string {
	t.Helper()
	raw, err := os.ReadFile(e.SettingsPath)
	if err != nil {
		t.Fatal(err)
	}
	var set map[string]any
	if err := json.Unmarshal(raw, &set); err != nil {
		t.Fatal(err)
	}
	for name, value := range map[string]string{"web-token": "Bearer " + secretValue + "\n", "web-key": secretValue} {
		if err := os.WriteFile(filepath.Join(e.Dir, "secrets", name), []byte(value), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	set["servers"] = map[string]any{
		"local": set["server"],
		"web": map[string]any{"url": "https://tools.example/mcp", "headers": map[string]any{
			"Authorization": map[string]any{"file": "secrets/web-token"},
			"X-Api-Key":     "secrets/web-key",
		}},
	}
	delete(set, "server")
	set["tools"] = map[string]any{
		"local.echo":  map[string]any{"action": "provared.data.read"},
		"local.slow":  map[string]any{"action": "provared.data.read"},
		"local.write": map[string]any{"action": "provared.data.change"},
		"web.*":       map[string]any{"refuse": true},
	}
	out, err := json.MarshalIndent(set, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := e.SettingsPath
	if asYAML {
		if out, err = yaml.JSONToYAML(out); err != nil {
			t.Fatal(err)
		}
		path = strings.TrimSuffix(path, ".json") + ".yaml"
	}
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCheckSeveralServers: check reads the "servers" form (JSON and YAML)
// as the start does: each stdio server's program and credentials, each
// HTTP server's headers (also one named X-Api-Key, which no environment
// variable could be); a rule that refuses asks the slip nothing, and a
// tool whose action the slip does not allow is a note. All well, with
// one warning, and it is a real one (a credential read from the
// executor's environment). Then each server's credentials are broken, and
// each is reported at its place; no value is ever shown.
func TestCheckSeveralServers(t *testing.T) {
	for _, asYAML := range []bool{false, true} {
		t.Run(map[bool]string{false: "json", true: "yaml"}[asYAML], func(t *testing.T) {
			e := folder(t, nil)
			bookWithSlip(t, e)
			path := severalServers(t, e, asYAML)
			code, out, errOut := run(t, "check", "--config", path)
			if code != ExitOK {
				t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
			}
			ok := itemLines(out, "ok")
			for _, want := range [][]string{
				{"tool server local (servers.local.command)", "found"},
				{"credential FILES_TOKEN (servers.local.env.FILES_TOKEN)", "present"},
				{"credential API_TOKEN (servers.local.env.API_TOKEN)", "present"},
				{"tool server web (servers.web.url)", "https://tools.example/mcp", "check does not contact it"},
				{"header Authorization (servers.web.headers.Authorization)", "present"},
				{"header X-Api-Key (servers.web.headers.X-Api-Key)", "present"},
			} {
				if !has(ok, want...) {
					t.Errorf("no ok line with %q:\n%s", want, out)
				}
			}
			if w := itemLines(out, "warning"); len(w) != 1 || !has(w, "servers.local.env.API_TOKEN", "executor's own environment") {
				t.Errorf("warnings: want only the one of the credential read from the environment:\n%s", strings.Join(w, "\n"))
			}
			if n := itemLines(out, "note"); !has(n, `tools["local.write"].action`, `does not allow the action "provared.data.change"`) || has(n, "web.*") {
				t.Errorf("notes:\n%s", strings.Join(n, "\n"))
			}
			if strings.Contains(out, `action ""`) {
				t.Errorf("the rule that refuses is taken for an action:\n%s", out)
			}

			// A header value with a line break, a missing header file, a
			// missing credential of the stdio server.
			if err := os.WriteFile(filepath.Join(e.Dir, "secrets", "web-key"), []byte(secretValue+"\nInjected: 1"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(filepath.Join(e.Dir, "secrets", "web-token")); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(filepath.Join(e.Dir, "secrets", "files-token")); err != nil {
				t.Fatal(err)
			}
			code, out, errOut = run(t, "check", "--config", path)
			if code != ExitFinding {
				t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
			}
			problems := itemLines(out, "problem")
			for _, want := range [][]string{
				{"header X-Api-Key (servers.web.headers.X-Api-Key)", "line break", "every request to the server would fail"},
				{"header Authorization (servers.web.headers.Authorization)", "not there"},
				{"credential FILES_TOKEN (servers.local.env.FILES_TOKEN)", "not there"},
			} {
				if !has(problems, want...) {
					t.Errorf("no problem line with %q:\n%s", want, out)
				}
			}
			if len(problems) != 3 || strings.Contains(out, "Injected") {
				t.Errorf("want exactly these three problems, no value shown:\n%s", out)
			}
		})
	}
}

// TestCheckWithoutTrustedPasskey: settings without agent.issuerKeys read
// (keys and the page need them before the thumbprint is known); check
// says once, as a problem, that the executor will not start and how to get
// the thumbprint, with no warning beside it.
func TestCheckWithoutTrustedPasskey(t *testing.T) {
	e := folder(t, nil)
	bookWithSlip(t, e)
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
	out, _ := json.Marshal(set)
	if err := os.WriteFile(e.SettingsPath, out, 0o600); err != nil {
		t.Fatal(err)
	}
	code, text, errOut := run(t, "check", "--config", e.SettingsPath)
	if code != ExitFinding {
		t.Fatalf("exit %d\n%s\n%s", code, text, errOut)
	}
	if got := itemLines(text, "problem"); !has(got, "agent.issuerKeys", "will not start", "mcp-executor page --config "+e.SettingsPath, "thumbprint") {
		t.Errorf("problems:\n%s", strings.Join(got, "\n"))
	}
	if has(itemLines(text, "warning"), "issuerKeys") {
		t.Errorf("a warning beside the problem:\n%s", text)
	}
}

// TestCheckWhenVaultLoginFails: with the Vault login failing, check says
// so once, and says of each Vault source that it was not read, not that
// its value is missing (which would send the user to make it).
func TestCheckWhenVaultLoginFails(t *testing.T) {
	e := folder(t, nil)
	bookWithSlip(t, e)
	raw, err := os.ReadFile(e.SettingsPath)
	if err != nil {
		t.Fatal(err)
	}
	var set map[string]any
	if err := json.Unmarshal(raw, &set); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.Dir, "vault-token"), []byte("s.not-a-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	set["vault"] = map[string]any{"address": "http://127.0.0.1:1", "auth": map[string]any{"token": map[string]any{"file": "vault-token"}}}
	server, _ := set["server"].(map[string]any)
	env, ok := server["env"].(map[string]any)
	if !ok {
		t.Fatalf("settings without server.env: %s", raw)
	}
	env["DB_PASSWORD"] = "vault:secret/files/db#password"
	out, _ := json.Marshal(set)
	if err := os.WriteFile(e.SettingsPath, out, 0o600); err != nil {
		t.Fatal(err)
	}
	code, text, errOut := run(t, "check", "--config", e.SettingsPath)
	if code != ExitFinding {
		t.Fatalf("exit %d\n%s\n%s", code, text, errOut)
	}
	problems := itemLines(text, "problem")
	if !has(problems, "vault (http://127.0.0.1:1)", "could not log in") ||
		!has(problems, "credential DB_PASSWORD (server.env.DB_PASSWORD)", "not read, as the Vault client could not be made or log in") {
		t.Errorf("problems:\n%s", strings.Join(problems, "\n"))
	}
	if has(problems, "DB_PASSWORD", "not there") {
		t.Errorf("a source not reached is said to be missing:\n%s", text)
	}
}
