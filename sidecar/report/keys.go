package report

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"

	"sigs.k8s.io/yaml"

	"github.com/seed-6e06167c/mcp-executor/keys"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/receipt"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
	"github.com/seed-6e06167c/mcp-executor/sidecar/boot"
	"github.com/seed-6e06167c/mcp-executor/sidecar/contentrules"
	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
)

// KeysOptions say whose keys to make.
type KeysOptions struct {
	ConfigPath string
	Logger     *slog.Logger // nil: discard
}

// KeyMade is what MakeKeys did for one key set or the copy key.
type KeyMade struct {
	What    string   // "agent keys", "executor keys", "copy key"
	Sources []string // the sources as the settings name them
	Made    bool     // made now (false: it was there)
	Keys    jwk.KeySet
	Loaded  bool  // Keys holds the key set (always false for the copy key)
	Err     error // why it could not be read or made; a *keys.ManifestNeeded for a Secret
}

// KeysReport is what MakeKeys did and what goes into the permission.
type KeysReport struct {
	Settings *settings.Settings
	Agent    KeyMade
	Executor KeyMade
	CopyKey  KeyMade
	// Software is the agent.software entry stating the rules on content;
	// nil when the settings name no rules file.
	Software *slip.Software
	// RulesErr is why the rules file could not be read.
	RulesErr error
}

// Complete reports whether both key sets loaded and the rules file (if
// any) was read: the permission's parts are then all known.
func (r *KeysReport) Complete() bool {
	return r.Agent.Loaded && r.Executor.Loaded && r.RulesErr == nil && r.softwareFits() == nil
}

// Manifests are the Secrets the user must apply, one per Secret.
func (r *KeysReport) Manifests() []*keys.ManifestNeeded {
	var out []*keys.ManifestNeeded
	for _, k := range []KeyMade{r.Agent, r.Executor, r.CopyKey} {
		var m *keys.ManifestNeeded
		if errors.As(k.Err, &m) {
			out = append(out, m)
		}
	}
	return out
}

// Problems are the faults other than a Secret to apply.
func (r *KeysReport) Problems() []error {
	var out []error
	for _, k := range []KeyMade{r.Agent, r.Executor, r.CopyKey} {
		var m *keys.ManifestNeeded
		if k.Err != nil && !errors.As(k.Err, &m) {
			out = append(out, fmt.Errorf("%s: %w", k.What, k.Err))
		}
	}
	if r.RulesErr != nil {
		out = append(out, r.RulesErr)
	}
	if err := r.softwareFits(); err != nil {
		out = append(out, err)
	}
	return out
}

// softwareFits: an agent.software name is 1 to 200 characters.
func (r *KeysReport) softwareFits() error {
	if r.Software != nil && canon.Chars(r.Software.Name) > 200 {
		return fmt.Errorf("settings name: %q is over the 200 characters a slip's agent.software name may hold; shorten the executor's name to %d characters or fewer",
			r.Software.Name, 200-canon.Chars(receipt.RulesSoftwarePrefix))
	}
	return nil
}

// Permission is what goes into the permission, as one JSON-ready value:
// {"agent":{"keys":[…],"software":[…]},"with":{"id","name","keys"},
// "requires":[{"need":"countersignature"}]}. It holds public keys only.
// Call it only when Complete.
func (r *KeysReport) Permission() map[string]any {
	agent := map[string]any{"keys": r.Agent.Keys.Value()}
	if r.Software != nil {
		agent["software"] = []any{map[string]any{"name": r.Software.Name, "sha256": r.Software.SHA256}}
	}
	return map[string]any{
		"agent":    agent,
		"with":     map[string]any{"id": r.Settings.Service, "name": r.Settings.Name, "keys": r.Executor.Keys.Value()},
		"requires": []any{map[string]any{"need": "countersignature"}},
	}
}

// MakeKeys makes the agent's and the executor's key sets and the copy key
// where they are missing (a file is made with mode 0600; a Vault KV field or
// Transit key is written in Vault; for a Kubernetes Secret a manifest is
// returned for the user to apply, see KeysReport.Manifests), and reads the
// rules on content, so that the report can say what goes into the
// permission. An error means the settings could not be read.
func MakeKeys(ctx context.Context, o KeysOptions) (*KeysReport, error) {
	log := orDiscard(o.Logger)
	set, _, err := settings.Load(o.ConfigPath)
	if err != nil {
		return nil, err
	}
	kopts, closeClients, errs := boot.Clients(set, log)
	defer closeClients()
	clientErr := errors.Join(errs...)

	r := &KeysReport{Settings: set}
	makeSet := func(what string, ks settings.KeySource) KeyMade {
		spec := boot.KeySetSpec(ks)
		k := KeyMade{What: what, Sources: []string{spec.Source}}
		if spec.MLDSA != "" {
			k.Sources = append(k.Sources, spec.MLDSA)
		}
		signer, made, err := keys.LoadOrCreateKeySet(ctx, spec, set.Dir, kopts)
		if err != nil {
			k.Err = withClientErr(err, clientErr)
			return k
		}
		k.Keys, k.Made, k.Loaded = signer.Keys(), made, true
		return k
	}
	r.Agent = makeSet("agent keys", set.Agent.Keys)
	r.Executor = makeSet("executor keys", set.Executor.Keys)
	r.CopyKey = KeyMade{What: "copy key", Sources: []string{set.Executor.CopyKey}}
	if _, made, err := keys.LoadOrCreateCopyKey(ctx, set.Executor.CopyKey, set.Dir, kopts); err != nil {
		r.CopyKey.Err = withClientErr(err, clientErr)
	} else {
		r.CopyKey.Made = made
	}
	if set.ContentRules != "" {
		rs, err := contentrules.Load(set.ContentRules)
		if err != nil {
			r.RulesErr = err
		} else {
			r.Software = &slip.Software{Name: receipt.RulesSoftwareName(set.Name), SHA256: rs.Fingerprint()}
		}
	}
	return r, nil
}

// withClientErr adds why a Vault or Kubernetes client could not be made
// to a source's error (which then only says the client is missing).
func withClientErr(err, clientErr error) error {
	var m *keys.ManifestNeeded
	if clientErr == nil || errors.As(err, &m) {
		return err
	}
	return fmt.Errorf("%w (%w)", err, clientErr)
}

// SecretManifests joins the manifests of ms into one YAML stream with one
// document per Secret: manifests for keys of the same Secret are merged, so
// that one server-side apply holds every key (two applies by the same
// field manager would each drop the other's key). The result holds secret
// values: write it only where the user asked, with mode 0600.
func SecretManifests(ms []*keys.ManifestNeeded) ([]byte, error) {
	type secret struct {
		doc  map[string]any
		data map[string]any
	}
	byName := map[string]*secret{}
	var order []string
	for _, m := range ms {
		var doc map[string]any
		if err := yaml.Unmarshal(m.Manifest, &doc); err != nil {
			return nil, fmt.Errorf("reading the manifest of Secret %s/%s: %w", m.Namespace, m.Name, err)
		}
		data, _ := doc["stringData"].(map[string]any)
		id := m.Namespace + "/" + m.Name
		s, ok := byName[id]
		if !ok {
			s = &secret{doc: doc, data: map[string]any{}}
			byName[id] = s
			order = append(order, id)
		}
		for k, v := range data {
			s.data[k] = v
		}
	}
	sort.Strings(order)
	var out []byte
	for i, id := range order {
		s := byName[id]
		s.doc["stringData"] = s.data
		b, err := yaml.Marshal(s.doc)
		if err != nil {
			return nil, fmt.Errorf("writing the manifest of Secret %s: %w", id, err)
		}
		if i > 0 {
			out = append(out, "---\n"...)
		}
		out = append(out, b...)
	}
	return out, nil
}
