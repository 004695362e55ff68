package sidecar

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/keys"
	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/sidecar/boot"
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
	kopts, closeKeys, err := boot.KeyOptions(set, log)
	if err != nil {
		return nil, err
	}
	closers = append(closers, closeKeys)

	agent, err := keys.LoadKeySet(ctx, boot.KeySetSpec(set.Agent.Keys), set.Dir, kopts)
	if err != nil {
		return nil, fmt.Errorf("the agent's keys: %w", err)
	}
	exec, err := keys.LoadKeySet(ctx, boot.KeySetSpec(set.Executor.Keys), set.Dir, kopts)
	if err != nil {
		return nil, fmt.Errorf("the executor's keys: %w", err)
	}
	copyKey, err := boot.LoadCopyKey(ctx, set, kopts, log)
	if err != nil {
		return nil, err
	}
	if len(set.Agent.IssuerKeys) == 0 {
		return nil, errors.New("settings: agent.issuerKeys names no passkey; the executor acts only under a slip signed by a passkey it trusts")
	}
	sl, err := boot.LoadSlip(set, agent.Keys(), exec.Keys())
	if err != nil {
		return nil, err
	}

	// The tool server's credentials must be readable before anything is written: a start that would fail
	// on them leaves no book and no copy behind.
	if _, err := serverEnv(ctx, set, log); err != nil {
		return nil, err
	}

	if err := boot.RepairTornBook(set, copyKey, log); err != nil {
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
	if err := boot.AddSlip(bk, sl); err != nil {
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
		if rules, err = boot.LoadContentRules(set, sl, log); err != nil {
			return nil, err
		}
		rulesFP = rules.Fingerprint()
	} else if err := boot.NoRulesStated(sl); err != nil {
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
