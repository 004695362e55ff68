//go:build integration

package keysintegration_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/internal/itest"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/passkey"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
)

const (
	credentialVar = "TOOL_CREDENTIAL"      // the tool server's credential, read from Vault or a Secret
	canaryVar     = "KEYSIT_EXECUTOR_ONLY" // in the executor's environment, not passed to the server
	readAction    = "provared.data.read"   // the one action the slip allows
	sendAction    = "provared.message.send"
)

// sources say where each secret of one executor lives, as the settings
// write them. Blocks are further members of the settings ("vault",
// "kubernetes").
type sources struct {
	agentKeys    any // a source, or {"ed25519": …, "mldsa87": …}
	executorKeys any
	copyKey      string
	credential   string
	blocks       map[string]any
}

// setup is one executor's working folder and everything it ran.
type setup struct {
	dir      string
	settings string
	passkey  *passkey.DevPasskey
	thumb    string
	execEnv  []string // the executor's whole environment
	home     string

	mu      sync.Mutex
	secrets map[string]string // what appears in no output: what it is → its text
	outputs []output          // every output of every run
}

type output struct{ name, text string }

func newSetup(t *testing.T) *setup {
	t.Helper()
	dir := t.TempDir()
	pk, err := passkey.NewDevPasskey("https://sign.example.org", "example.org")
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	return &setup{
		dir: dir, settings: filepath.Join(dir, "executor.json"), passkey: pk, thumb: pk.Key().Thumbprint, home: home,
		// The executor's environment: what passEnv names, and a recognisable variable that must not reach
		// the tool server.
		execEnv: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, canaryVar + "=" + itest.Name("executor-only-")},
		secrets: map[string]string{},
	}
}

// writeSettings writes the settings file naming src, with the tool server
// being this test binary.
func (s *setup) writeSettings(t *testing.T, src sources) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]any{
		"name":    "keys integration executor",
		"service": "executor",
		"server": map[string]any{
			"command": self,
			"args":    []string{},
			"passEnv": []string{"PATH", "HOME"},
			"env": map[string]any{
				serverEnv:     map[string]any{"value": "on"},
				credentialVar: src.credential,
			},
		},
		"agent": map[string]any{
			"slip": "slip.json", "book": "book.jsonl", "keys": src.agentKeys,
			"issuerKeys": []string{s.thumb},
		},
		"executor": map[string]any{"keys": src.executorKeys, "copy": "copy.jsonl", "copyKey": src.copyKey},
		"tools": map[string]any{
			"env":  map[string]any{"action": readAction},
			"echo": map[string]any{"action": readAction},
			"send": map[string]any{"action": sendAction},
		},
	}
	for k, v := range src.blocks {
		set[k] = v
	}
	b, err := json.MarshalIndent(set, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.settings, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// writeFile writes a secret file (mode 0600) in the folder and returns its
// name.
func (s *setup) writeFile(t *testing.T, name, text string) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(s.dir, name), []byte(text+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return name
}

// secret adds a value that must appear in no output.
func (s *setup) secret(what, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.secrets[what] = value
}

// secretBytes adds raw secret bytes in each encoding they might leak in.
func (s *setup) secretBytes(what string, raw []byte) {
	s.secret(what+" (base64url)", canon.B64(raw))
	s.secret(what+" (base64)", base64.StdEncoding.EncodeToString(raw))
	s.secret(what+" (hex)", hex.EncodeToString(raw))
}

// secretKeySet adds a key-set document (or half of one, or a bare seed) and
// the seeds it holds.
func (s *setup) secretKeySet(t *testing.T, what, doc string) {
	t.Helper()
	s.secret(what, doc)
	var seeds map[string]string
	if err := json.Unmarshal([]byte(doc), &seeds); err != nil {
		seeds = map[string]string{"seed": strings.TrimSpace(doc)}
	}
	for name, b64 := range seeds {
		raw, err := canon.UnB64(b64)
		if err != nil || len(raw) != 32 {
			t.Fatalf("%s: %s is not a 32-byte seed", what, name)
		}
		s.secretBytes(what+" "+name, raw)
	}
}

func (s *setup) record(name, text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.outputs = append(s.outputs, output{name, text})
}

// run runs the executor binary with args in the executor's environment and
// records its outputs.
func (s *setup) run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(executorBin, args...)
	cmd.Env, cmd.Dir = s.execEnv, s.dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("mcp-executor %s did not end in 30 s\nstdout:\n%s\nstderr:\n%s", args[0], out.String(), errOut.String())
	}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	s.record("stdout of "+args[0], out.String())
	s.record("stderr of "+args[0], errOut.String())
	return code, out.String(), errOut.String()
}

// permission runs `keys --json` (which makes the keys missing from a store
// the executor may write) and returns what goes into the permission.
func (s *setup) permission(t *testing.T) map[string]any {
	t.Helper()
	code, out, errOut := s.run(t, "keys", "--config", s.settings, "--json")
	if code != 0 {
		t.Fatalf("keys: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	var perm map[string]any
	if err := json.Unmarshal([]byte(out), &perm); err != nil {
		t.Fatalf("keys --json: %v\n%s", err, out)
	}
	return perm
}

// writeSlip has the person sign a slip naming the agent keys and the
// executor ("with") keys keys printed, allowing readAction alone.
func (s *setup) writeSlip(t *testing.T, perm map[string]any) {
	t.Helper()
	agent, _ := perm["agent"].(map[string]any)
	with, _ := perm["with"].(map[string]any)
	if agent["keys"] == nil || with["keys"] == nil {
		t.Fatalf("keys --json gave no agent.keys or with.keys: %v", perm)
	}
	fields := map[string]any{
		"issuer":     s.passkey.Issuer("Test Person"),
		"agent":      map[string]any{"keys": agent["keys"], "name": "test agent"},
		"actions":    []any{readAction},
		"limits":     []any{},
		"requires":   perm["requires"],
		"with":       []any{with},
		"validFrom":  canon.FormatTime(time.Now().Add(-time.Hour)),
		"validUntil": canon.FormatTime(time.Now().Add(24 * time.Hour)),
		"purpose":    "testing the executor with keys from Vault and Kubernetes",
	}
	sl, err := slip.WriteSlip(fields, s.passkey)
	if err != nil {
		t.Fatal(err)
	}
	b, err := canon.Marshal(sl.Record.Value())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.dir, "slip.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// noSecretInOutputs checks every output recorded, the book and the copy
// for every secret value.
func (s *setup) noSecretInOutputs(t *testing.T) {
	t.Helper()
	outs := append([]output(nil), s.outputs...)
	for _, f := range []string{"book.jsonl", "copy.jsonl"} {
		b, err := os.ReadFile(filepath.Join(s.dir, f))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		outs = append(outs, output{f, string(b)})
	}
	var whats []string
	for w := range s.secrets {
		whats = append(whats, w)
	}
	sort.Strings(whats)
	if len(whats) == 0 {
		t.Fatal("no secret values to look for")
	}
	for _, o := range outs {
		for _, w := range whats {
			if v := s.secrets[w]; len(v) >= 8 && strings.Contains(o.text, v) {
				t.Errorf("%s holds the %s", o.name, w)
			}
		}
	}
}
