package sidecar

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/keys"
	"github.com/seed-6e06167c/mcp-executor/keys/kube"
	"github.com/seed-6e06167c/mcp-executor/keys/vault"
	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
	"github.com/seed-6e06167c/mcp-executor/sidecar/contentrules"
	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
)

// OpenOptions say where the executor's settings are.
type OpenOptions struct {
	ConfigPath string
	Logger     *slog.Logger // nil: discard
}

// Open starts an executor: it loads the settings and the keys, checks the
// slip (the trusted passkey signed it; its agent keys are the agent keys
// held; its with entry for the service holds the executor's keys), opens
// the book (verified once) and adds the slip to it if it is not there,
// opens the copy, and writes the receipts of calls the executor was sending
// when it last stopped. Close it when every session has ended.
func Open(ctx context.Context, o OpenOptions) (_ *Executor, err error) {
	log := orDiscard(o.Logger)
	set, warnings, err := settings.Load(o.ConfigPath)
	if err != nil {
		return nil, err
	}
	for _, w := range warnings {
		log.Warn("settings", slog.String("warning", w.String()))
	}
	var closers []func() error
	defer func() {
		if err != nil {
			for i := len(closers) - 1; i >= 0; i-- {
				_ = closers[i]()
			}
		}
	}()
	kopts, closeKeys, err := keyOptions(set, log)
	if err != nil {
		return nil, err
	}
	closers = append(closers, closeKeys)

	agent, err := keys.LoadKeySet(ctx, keySetSpec(set.Agent.Keys), set.Dir, kopts)
	if err != nil {
		return nil, fmt.Errorf("the agent's keys: %w", err)
	}
	exec, err := keys.LoadKeySet(ctx, keySetSpec(set.Executor.Keys), set.Dir, kopts)
	if err != nil {
		return nil, fmt.Errorf("the executor's keys: %w", err)
	}
	copyKey, err := loadCopyKey(ctx, set, kopts, log)
	if err != nil {
		return nil, err
	}
	if len(set.Agent.IssuerKeys) == 0 {
		return nil, errors.New("settings: agent.issuerKeys names no passkey; the executor acts only under a slip signed by a passkey it trusts")
	}
	sl, err := loadSlip(set, agent.Keys(), exec.Keys())
	if err != nil {
		return nil, err
	}

	// The tool server's credentials must be readable before anything is written: a start that would fail
	// on them leaves no book and no copy behind.
	if _, err := serverEnv(ctx, set, log); err != nil {
		return nil, err
	}

	if err := repairTornBook(set, copyKey, log); err != nil {
		return nil, err
	}
	bk, err := book.OpenBook(set.Agent.Book, book.Options{IssuerKeys: set.Agent.IssuerKeys})
	if err != nil {
		return nil, err
	}
	closers = append(closers, bk.Close)
	if err := bk.Ledger().Sound(); err != nil {
		return nil, fmt.Errorf("book %s: %w", set.Agent.Book, err)
	}
	if err := addSlip(bk, sl); err != nil {
		return nil, err
	}
	cp, err := copylog.Open(set.Executor.Copy, copyKey, set.Name)
	if err != nil {
		return nil, err
	}
	closers = append(closers, cp.Close)

	var rules *contentrules.Rules
	rulesFP := ""
	if set.ContentRules != "" {
		if rules, err = loadContentRules(set, sl, log); err != nil {
			return nil, err
		}
		rulesFP = rules.Fingerprint()
	} else if err := noRulesStated(sl); err != nil {
		return nil, err
	}

	e := newExecutor(log, set, sl.Fingerprint, agent, exec, bk, cp, rules, rulesFP)
	e.closer = func() error {
		var errs []error
		for i := len(closers) - 1; i >= 0; i-- {
			errs = append(errs, closers[i]())
		}
		return errors.Join(errs...)
	}
	if err := e.recover(ctx); err != nil {
		e.Close()
		err = fmt.Errorf("recovering at start: %w", err)
		return nil, err
	}
	if err := cp.Append(copylog.Line{Kind: copylog.KindStart}); err != nil {
		e.Close()
		return nil, fmt.Errorf("writing the copy: %w", err)
	}
	log.Info("executor started", slog.String("name", set.Name), slog.String("slip", sl.Fingerprint),
		slog.Int("bookEntries", bk.Ledger().Size()))
	return e, nil
}

// loadCopyKey reads the copy key, making one only while the copy holds no
// line: a copy that holds lines and has lost its key cannot be read, and a
// new key would make every later start and compare say the key is wrong.
func loadCopyKey(ctx context.Context, set *settings.Settings, kopts keys.Options, log *slog.Logger) ([]byte, error) {
	if fi, err := os.Stat(set.Executor.Copy); err == nil && fi.Size() > 0 {
		key, err := keys.LoadCopyKey(ctx, set.Executor.CopyKey, set.Dir, kopts)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("copy %s holds lines and there is no copy key (%s): the copy cannot be read, so the executor does not start; put the copy key back: %w",
				set.Executor.Copy, set.Executor.CopyKey, copylog.ErrKeyMissing)
		}
		if err != nil {
			return nil, fmt.Errorf("the copy key: %w", err)
		}
		return key, nil
	}
	key, created, err := keys.LoadOrCreateCopyKey(ctx, set.Executor.CopyKey, set.Dir, kopts)
	if err != nil {
		return nil, fmt.Errorf("the copy key: %w", err)
	}
	if created {
		log.Info("made a new copy key", slog.String("source", set.Executor.CopyKey))
	}
	return key, nil
}

// Settings are the settings the executor was started with.
func (e *Executor) Settings() *settings.Settings { return e.set }

func keySetSpec(k settings.KeySource) keys.KeySetSpec {
	if k.Whole != "" {
		return keys.KeySetSpec{Source: k.Whole}
	}
	return keys.KeySetSpec{Source: k.Ed25519, MLDSA: k.MLDSA87}
}

// keyOptions makes the Vault and Kubernetes clients the settings name.
func keyOptions(set *settings.Settings, log *slog.Logger) (keys.Options, func() error, error) {
	o := keys.Options{Logger: log}
	closeFn := func() error { return nil }
	if v := set.Vault; v != nil {
		vo := vault.Options{Address: v.Address, CAFile: v.CAFile, Namespace: v.Namespace, Logger: log}
		switch {
		case v.Auth.Kubernetes != nil:
			vo.Auth.Kubernetes = &vault.KubernetesAuth{Role: v.Auth.Kubernetes.Role, Mount: v.Auth.Kubernetes.Mount, TokenFile: v.Auth.Kubernetes.TokenFile}
		case v.Auth.Token != nil:
			vo.Auth.Token = &vault.TokenAuth{File: v.Auth.Token.File}
		case v.Auth.AppRole != nil:
			vo.Auth.AppRole = &vault.AppRoleAuth{RoleIDFile: v.Auth.AppRole.RoleIDFile, SecretIDFile: v.Auth.AppRole.SecretIDFile, Mount: v.Auth.AppRole.Mount}
		}
		c, err := vault.New(vo)
		if err != nil {
			return o, nil, fmt.Errorf("vault: %w", err)
		}
		o.Vault = c
		closeFn = func() error { c.Close(); return nil }
	}
	if k := set.Kubernetes; k != nil {
		c, err := kube.New(kube.Options{Kubeconfig: k.Kubeconfig})
		if err != nil {
			closeFn()
			return o, nil, fmt.Errorf("kubernetes: %w", err)
		}
		o.Kube = c
	}
	return o, closeFn, nil
}

// loadSlip reads the slip file and checks it: signed by a trusted passkey,
// for the agent keys held, naming the executor's keys under its service id.
func loadSlip(set *settings.Settings, agentKeys, execKeys jwk.KeySet) (*slip.Slip, error) {
	data, err := os.ReadFile(set.Agent.Slip)
	if err != nil {
		return nil, fmt.Errorf("reading slip %s: %w", set.Agent.Slip, err)
	}
	v, err := decodeEnvelope(data)
	if err != nil {
		return nil, fmt.Errorf("reading slip %s: %w", set.Agent.Slip, err)
	}
	sl, res := slip.Check(v, slip.Options{IssuerKeys: set.Agent.IssuerKeys})
	if !res.Sound() || sl == nil {
		if len(res.Problems) > 0 {
			return nil, fmt.Errorf("slip %s does not check: %w", set.Agent.Slip, res.Problems[0])
		}
		return nil, fmt.Errorf("slip %s: its signature could not be checked (%s)", set.Agent.Slip, res.Signature.State)
	}
	if !sl.Agent.Keys.Equal(agentKeys) {
		return nil, fmt.Errorf("slip %s is for other agent keys than the ones the settings name (agent.keys)", set.Agent.Slip)
	}
	svc, ok := sl.Service(set.Service)
	if !ok {
		return nil, fmt.Errorf("slip %s names no service %q in its with; the executor's service id must be there", set.Agent.Slip, set.Service)
	}
	if svc.Keys == nil || !svc.Keys.Equal(execKeys) {
		return nil, fmt.Errorf("slip %s: the service %q in its with does not hold the executor's keys (executor.keys)", set.Agent.Slip, set.Service)
	}
	return sl, nil
}

// decodeEnvelope reads a record's JSON as a canonical value (objects,
// lists, strings, whole numbers), however it is spaced.
func decodeEnvelope(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("text after the record")
	}
	return canonicalValue(v)
}

func canonicalValue(v any) (any, error) {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			c, err := canonicalValue(x)
			if err != nil {
				return nil, err
			}
			t[k] = c
		}
		return t, nil
	case []any:
		for i, x := range t {
			c, err := canonicalValue(x)
			if err != nil {
				return nil, err
			}
			t[i] = c
		}
		return t, nil
	case string:
		return t, nil
	case json.Number:
		n, err := t.Int64()
		if err != nil || n < 0 {
			return nil, fmt.Errorf("the number %s is not a whole number a record may hold", t)
		}
		return n, nil
	}
	return nil, fmt.Errorf("a value of type %T is not one a record may hold", v)
}

// addSlip appends the slip to the book unless it is there already.
func addSlip(bk *book.Book, sl *slip.Slip) error {
	err := bk.Append(book.Line{Slip: sl.Record})
	if err == nil {
		return nil
	}
	if c := problem.Code(err); c == "duplicate-slip" || c == "duplicate-id" {
		there, serr := slipInBook(bk.Path(), sl)
		if serr != nil {
			return serr
		}
		if there {
			return nil
		}
	}
	return fmt.Errorf("adding the slip to the book: %w", err)
}

// slipInBook reports whether an entry of the book is the slip sl.
func slipInBook(path string, sl *slip.Slip) (bool, error) {
	errFound := errors.New("found")
	err := book.ReadFileEntries(path, func(e book.FileEntry) error {
		if e.Kind == book.KindSlip && e.Fingerprint == sl.Fingerprint {
			return errFound
		}
		return nil
	})
	if err == errFound {
		return true, nil
	}
	return false, err
}

// repairTornBook handles the one torn book the executor can explain: a kill in the middle of its own
// write of a receipt line. That write was never acknowledged (a call's answer goes out only after its
// line is durable), and the copy still shows the call as sent without a receipt, so the next step of the
// start writes that receipt again from the copy (see book.RepairTornLine). Any other torn book (no
// unfinished call in the copy, no copy, an unreadable copy, a book held by a running executor) is left
// as it is, and opening the book then stops with a message naming the line.
func repairTornBook(set *settings.Settings, copyKey []byte, log *slog.Logger) error {
	explained := func() bool {
		lines, err := copylog.ReadFile(set.Executor.Copy, copyKey, set.Name)
		return err == nil && len(copylog.UnfinishedCalls(lines)) > 0
	}
	torn, err := book.RepairTornLine(set.Agent.Book, explained)
	if err != nil || torn == nil {
		return err
	}
	log.Warn("the book's last line was torn by a stop in the middle of a write; it is kept aside and the receipt is written again from the copy",
		slog.String("book", set.Agent.Book), slog.Int("line", torn.Line), slog.String("keptAt", torn.KeptAt))
	return nil
}
