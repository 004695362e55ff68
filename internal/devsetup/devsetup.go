// Package devsetup builds a complete working folder for the executor, for
// tests and the demo: the agent's and the executor's key sets, the copy key,
// a slip signed by a development passkey (receipts/passkey.DevPasskey), the
// passkey's thumbprint as the trusted issuer, and a settings file that
// starts a given tool-server command.
//
// Records made here prove nothing about any person: the passkey is a
// software stand-in.
package devsetup

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/seed-6e06167c/mcp-executor/keys"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/passkey"
	"github.com/seed-6e06167c/mcp-executor/receipts/seal"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
)

// Tool is one tool's rule in the settings: its action and, optionally, its
// amount (the settings' JSON, e.g. {"unit":"GBP","pointer":"/total"}).
type Tool struct {
	Action string
	Amount map[string]any
	// Approve is the rule's "approve" as the settings write it (true or
	// {"timeout": ms}); nil for none.
	Approve any
}

// Options say what to build. Only Dir and Command are required.
type Options struct {
	Dir     string   // the working folder (it is created)
	Command string   // the tool server's program
	Args    []string // its arguments
	// Env is the server's environment: name → {"value": …} / {"file": …} /
	// {"env": …} as the settings write it. PassEnv defaults to PATH and HOME.
	Env     map[string]map[string]any
	PassEnv []string

	Name    string          // the executor's name; default "test executor"
	Service string          // the executor's id in the slip; default "executor"
	Tools   map[string]Tool // the settings' tools; default none

	// Actions the slip allows; default every action Tools names.
	Actions []string
	// Limits are the slip's limits as its JSON writes them, e.g.
	// {"action":"x","count":2} or {"action":"x","max":100,"unit":"GBP"}.
	Limits []map[string]any
	// NoCountersignature leaves {"need":"countersignature"} out of requires.
	NoCountersignature bool
	// Requires are further conditions, e.g. {"need":"approval","action":"x"}.
	Requires []map[string]any
	// Software is the slip's agent.software, e.g.
	// {"name":"Content rules of test executor","sha256":"…"}; nil for none.
	Software []map[string]any
	// ValidFrom and ValidUntil default to an hour ago and a day ahead.
	ValidFrom, ValidUntil time.Time

	// Person, AgentName and Purpose are the slip's issuer name, agent name and purpose; they default to
	// "Test Person", "test agent" and "testing the executor".
	Person, AgentName, Purpose string

	// SealKeys writes a recorder's key set (keys/seal.jwk: the Ed25519,
	// ML-DSA-87 and SLH-DSA-SHA2-256s seeds) for a sealing executor; the
	// settings that use it are the caller's (Settings).
	SealKeys bool

	// Settings are further members of the settings file (timeout,
	// maxWaiting, unlisted, hideUnlisted, callIdInMeta, denialsPerHour,
	// shutdownWait, contentRules, …), written as given.
	Settings map[string]any
}

// Env is a built working folder.
type Env struct {
	Dir          string
	SettingsPath string
	SlipPath     string
	BookPath     string
	CopyPath     string
	CopyKeyPath  string
	AgentKeys    string // the agent's key-set file
	ExecutorKeys string // the executor's key-set file
	SealKeys     string // the recorder's key-set file, when Options.SealKeys

	Passkey    *passkey.DevPasskey
	Thumbprint string // the passkey's, trusted in the settings
	Slip       *slip.Slip
	Agent      jwk.Signer
	Executor   jwk.Signer
	// Sealer is the recorder's signer, when Options.SealKeys; Sealer's
	// Keys().Fingerprint() is what verify --sealer names.
	Sealer  *seal.LocalSigner
	CopyKey []byte
}

// Build writes the working folder.
func Build(o Options) (*Env, error) {
	if o.Dir == "" || o.Command == "" {
		return nil, fmt.Errorf("development set-up: Dir and Command are required")
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("development set-up: %w", err)
	}
	e := &Env{
		Dir:          o.Dir,
		SettingsPath: filepath.Join(o.Dir, "executor.json"),
		SlipPath:     filepath.Join(o.Dir, "slip.json"),
		BookPath:     filepath.Join(o.Dir, "book.jsonl"),
		CopyPath:     filepath.Join(o.Dir, "copy.jsonl"),
		CopyKeyPath:  filepath.Join(o.Dir, "copy.jsonl.key"),
		AgentKeys:    filepath.Join(o.Dir, "keys", "agent.jwk"),
		ExecutorKeys: filepath.Join(o.Dir, "keys", "executor.jwk"),
	}
	if err := os.MkdirAll(filepath.Join(o.Dir, "keys"), 0o700); err != nil {
		return nil, fmt.Errorf("development set-up: %w", err)
	}
	var err error
	if e.Agent, err = writeKeySet(e.AgentKeys); err != nil {
		return nil, err
	}
	if e.Executor, err = writeKeySet(e.ExecutorKeys); err != nil {
		return nil, err
	}
	if o.SealKeys {
		e.SealKeys = filepath.Join(o.Dir, "keys", "seal.jwk")
		if e.Sealer, err = writeSealKeySet(e.SealKeys); err != nil {
			return nil, err
		}
	}
	key := keys.NewCopyKey()
	if err := os.WriteFile(e.CopyKeyPath, key, 0o600); err != nil {
		return nil, fmt.Errorf("development set-up: %w", err)
	}
	if e.CopyKey, err = keys.ParseCopyKey(key); err != nil {
		return nil, fmt.Errorf("development set-up: %w", err)
	}
	if e.Passkey, err = passkey.NewDevPasskey("https://sign.example.org", "example.org"); err != nil {
		return nil, fmt.Errorf("development set-up: %w", err)
	}
	e.Thumbprint = e.Passkey.Key().Thumbprint

	name := o.Name
	if name == "" {
		name = "test executor"
	}
	service := o.Service
	if service == "" {
		service = "executor"
	}
	if e.Slip, err = WriteSlip(e, o, service); err != nil {
		return nil, err
	}
	if err := writeSettings(e, o, name, service); err != nil {
		return nil, err
	}
	return e, nil
}

// SlipFields are the content of the slip Build signs, before signing.
func SlipFields(e *Env, o Options, service string) map[string]any {
	actions := o.Actions
	if actions == nil {
		seen := map[string]bool{}
		for _, t := range o.Tools {
			if !seen[t.Action] {
				seen[t.Action] = true
				actions = append(actions, t.Action)
			}
		}
	}
	from, until := o.ValidFrom, o.ValidUntil
	if from.IsZero() {
		from = time.Now().Add(-time.Hour)
	}
	if until.IsZero() {
		until = time.Now().Add(24 * time.Hour)
	}
	requires := []any{}
	if !o.NoCountersignature {
		requires = append(requires, map[string]any{"need": "countersignature"})
	}
	for _, r := range o.Requires {
		requires = append(requires, canonical(r))
	}
	limits := []any{}
	for _, l := range o.Limits {
		limits = append(limits, canonical(l))
	}
	acts := make([]any, len(actions))
	for i, a := range actions {
		acts[i] = a
	}
	agent := map[string]any{"keys": e.Agent.Keys().Value(), "name": orDefault(o.AgentName, "test agent")}
	if len(o.Software) > 0 {
		sw := make([]any, len(o.Software))
		for i, x := range o.Software {
			sw[i] = x
		}
		agent["software"] = sw
	}
	return map[string]any{
		"issuer":     e.Passkey.Issuer(orDefault(o.Person, "Test Person")),
		"agent":      agent,
		"actions":    acts,
		"limits":     limits,
		"requires":   requires,
		"with":       []any{map[string]any{"id": service, "name": "the executor", "keys": e.Executor.Keys().Value()}},
		"validFrom":  canon.FormatTime(from),
		"validUntil": canon.FormatTime(until),
		"purpose":    orDefault(o.Purpose, "testing the executor"),
	}
}

// WriteSlip signs the slip for o with the env's passkey and writes it to
// e.SlipPath.
func WriteSlip(e *Env, o Options, service string) (*slip.Slip, error) {
	s, err := slip.WriteSlip(SlipFields(e, o, service), e.Passkey)
	if err != nil {
		return nil, fmt.Errorf("development set-up: %w", err)
	}
	b, err := canon.Marshal(s.Record.Value())
	if err != nil {
		return nil, fmt.Errorf("development set-up: %w", err)
	}
	if err := os.WriteFile(e.SlipPath, b, 0o644); err != nil {
		return nil, fmt.Errorf("development set-up: %w", err)
	}
	return s, nil
}

// writeSealKeySet writes fresh seal seeds to path (0600) and returns the
// recorder's signer.
func writeSealKeySet(path string) (*seal.LocalSigner, error) {
	seeds := keys.NewSealSeeds()
	if err := os.WriteFile(path, seeds.Marshal(), 0o600); err != nil {
		return nil, fmt.Errorf("development set-up: writing the seal key set: %w", err)
	}
	s, err := seeds.Signer()
	if err != nil {
		return nil, fmt.Errorf("development set-up: %w", err)
	}
	return s, nil
}

func writeKeySet(path string) (jwk.Signer, error) {
	seeds := keys.NewSeeds()
	if err := os.WriteFile(path, seeds.Marshal(), 0o600); err != nil {
		return nil, fmt.Errorf("development set-up: %w", err)
	}
	s, err := jwk.NewLocalSigner(seeds.Ed25519, seeds.MLDSA87)
	if err != nil {
		return nil, fmt.Errorf("development set-up: %w", err)
	}
	return s, nil
}

func writeSettings(e *Env, o Options, name, service string) error {
	tools := map[string]any{}
	for n, t := range o.Tools {
		rule := map[string]any{"action": t.Action}
		if t.Amount != nil {
			rule["amount"] = t.Amount
		}
		if t.Approve != nil {
			rule["approve"] = t.Approve
		}
		tools[n] = rule
	}
	passEnv := o.PassEnv
	if passEnv == nil {
		passEnv = []string{"PATH", "HOME"}
	}
	server := map[string]any{"command": o.Command, "args": nonNil(o.Args), "passEnv": passEnv}
	if len(o.Env) > 0 {
		server["env"] = o.Env
	}
	s := map[string]any{
		"name":    name,
		"service": service,
		"server":  server,
		"agent": map[string]any{
			"slip": "slip.json", "book": "book.jsonl", "keys": "keys/agent.jwk",
			"issuerKeys": []string{e.Thumbprint},
		},
		"executor": map[string]any{"keys": "keys/executor.jwk", "copy": "copy.jsonl", "copyKey": "copy.jsonl.key"},
		"tools":    tools,
	}
	for k, v := range o.Settings {
		s[k] = v
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("development set-up: settings: %w", err)
	}
	if err := os.WriteFile(e.SettingsPath, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("development set-up: %w", err)
	}
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// canonical turns ints in a JSON-shaped map into int64 for canonical JSON.
func canonical(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		switch n := v.(type) {
		case int:
			out[k] = int64(n)
		default:
			out[k] = v
		}
	}
	return out
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
