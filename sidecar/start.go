package sidecar

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/keys"
	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
	"github.com/seed-6e06167c/mcp-executor/sidecar/boot"
	"github.com/seed-6e06167c/mcp-executor/sidecar/contentrules"
	"github.com/seed-6e06167c/mcp-executor/sidecar/policy"
	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
	"github.com/seed-6e06167c/mcp-executor/sidecar/upstream"
)

// OpenOptions say where the executor's settings are.
type OpenOptions struct {
	ConfigPath string
	Logger     *slog.Logger // nil: discard
	// TracerProvider and MeterProvider make the executor's spans and
	// metrics; nil means the global ones (the command sets them up).
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	// ApproveSession (stdio/serve --approve-session, never the settings
	// file) approves every call held for approval in this process.
	ApproveSession bool
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
	var cl closers
	defer func() {
		if err != nil {
			_ = cl.close()
		}
	}()
	p, err := loadParts(ctx, set, &cl, log)
	if err != nil {
		return nil, err
	}
	if err := openRecords(set, p, &cl, log); err != nil {
		return nil, err
	}
	if err := p.loadRules(set, log); err != nil {
		return nil, err
	}
	e := newExecutor(log, set, p.slip.Fingerprint, p.agent, p.exec, p.book, p.copy, p.rules, p.rulesFP, o.TracerProvider, o.MeterProvider)
	e.closer = cl.close
	e.seed = p.seed
	if err := e.begin(ctx); err != nil {
		cerr := e.Close() // closes what the start opened
		cl = nil
		return nil, errors.Join(err, cerr)
	}
	if err := e.openCancellation(p.slip); err != nil {
		cerr := e.Close() // closes what the start opened
		cl = nil
		return nil, errors.Join(err, cerr)
	}
	if err := e.openApprovals(p.slip, o.ApproveSession); err != nil {
		cerr := e.Close() // closes what the start opened
		cl = nil
		return nil, errors.Join(err, cerr)
	}
	return e, nil
}

// closers are what a start opened, closed in the reverse order.
type closers []func() error

func (c *closers) add(f func() error) { *c = append(*c, f) }

func (c *closers) close() error {
	var errs []error
	for i := len(*c) - 1; i >= 0; i-- {
		errs = append(errs, (*c)[i]())
	}
	return errors.Join(errs...)
}

// parts are what a start loads before the executor is made.
type parts struct {
	agent, exec jwk.Signer
	copyKey     []byte
	slip        *slip.Slip
	book        *book.Book
	copy        *copylog.Log
	seed        *policy.Seed        // what the policy needs from the copy, gathered as it was opened
	rules       *contentrules.Rules // nil without a rules file
	rulesFP     string
}

// loadParts loads the key sets, the copy key and the slip, and reads the
// tool server's credentials once; it writes nothing.
func loadParts(ctx context.Context, set *settings.Settings, cl *closers, log *slog.Logger) (*parts, error) {
	kopts, closeKeys, err := boot.KeyOptions(set, log)
	if err != nil {
		return nil, err
	}
	cl.add(closeKeys)
	p := &parts{}
	if p.agent, err = keys.LoadKeySet(ctx, boot.KeySetSpec(set.Agent.Keys), set.Dir, kopts); err != nil {
		return nil, fmt.Errorf("the agent's keys: %w", err)
	}
	if p.exec, err = keys.LoadKeySet(ctx, boot.KeySetSpec(set.Executor.Keys), set.Dir, kopts); err != nil {
		return nil, fmt.Errorf("the executor's keys: %w", err)
	}
	if p.copyKey, err = boot.LoadCopyKey(ctx, set, kopts, log); err != nil {
		return nil, err
	}
	if err := set.TrustsAPasskey(); err != nil {
		return nil, err
	}
	if p.slip, err = boot.LoadSlip(set, p.agent.Keys(), p.exec.Keys()); err != nil {
		return nil, err
	}
	// The tool server's credentials must be readable before anything is written: a start that would fail
	// on them leaves no book and no copy behind.
	if err := upstream.CheckCredentials(ctx, set, log); err != nil {
		return nil, err
	}
	return p, nil
}

// openRecords sets aside a torn last line of the copy, opens the book
// (repairing a torn last line the copy explains), adds the slip to it,
// and opens the copy.
func openRecords(set *settings.Settings, p *parts, cl *closers, log *slog.Logger) error {
	if err := boot.RepairTornCopy(set, log); err != nil {
		return err
	}
	if err := boot.RepairTornBook(set, p.copyKey, log); err != nil {
		return err
	}
	// The copy is read and its tags checked on its own core while the book
	// is read: the two files are independent until recovery, and each takes
	// about a second with 90,000 calls.
	type opened struct {
		cp  *copylog.Log
		err error
	}
	seed, err := policy.NewSeed(set, time.Now())
	if err != nil {
		return err
	}
	copyOpened := make(chan opened, 1)
	go func() {
		cp, err := copylog.OpenWith(set.Executor.Copy, p.copyKey, set.Name, copylog.Visit{Kinds: seed.Kinds(), Each: seed.Visit})
		copyOpened <- opened{cp, err}
	}()
	bookErr := openBook(set, p, cl, log)
	c := <-copyOpened
	if c.err == nil {
		boot.LogCopyCheckpoint(c.cp, log)
		cl.add(func() error { return boot.CloseCopy(c.cp, log) })
	}
	if bookErr != nil {
		return bookErr
	}
	if c.err != nil {
		return c.err
	}
	p.copy, p.seed = c.cp, seed
	return nil
}

// openBook opens and checks the book and adds the slip to it when new.
func openBook(set *settings.Settings, p *parts, cl *closers, log *slog.Logger) error {
	bk, err := boot.OpenBook(set, p.copyKey, log)
	if err != nil {
		return err
	}
	cl.add(func() error { return boot.CloseBook(set, bk, p.copyKey, log) })
	if err := bk.Ledger().Sound(); err != nil {
		return fmt.Errorf("book %s: %w", set.Agent.Book, err)
	}
	if err := boot.AddSlip(bk, p.slip); err != nil {
		return err
	}
	p.book = bk
	return nil
}

// loadRules reads the rules on content the settings name; without any,
// the slip must state none.
func (p *parts) loadRules(set *settings.Settings, log *slog.Logger) error {
	if set.ContentRules == "" {
		return boot.NoRulesStated(p.slip)
	}
	rules, err := boot.LoadContentRules(set, p.slip, log)
	if err != nil {
		return err
	}
	p.rules, p.rulesFP = rules, rules.Fingerprint()
	return nil
}

// begin writes the receipts of the calls the executor was sending when it
// last stopped, and the copy's start line.
func (e *Executor) begin(ctx context.Context) error {
	if err := e.recover(ctx); err != nil {
		return fmt.Errorf("recovering at start: %w", err)
	}
	pol, err := policy.New(e.set, e.seed, e.copy, e.log)
	if err != nil {
		return err
	}
	e.pol, e.seed = pol, nil
	if err := e.copyAppend(copylog.Line{Kind: copylog.KindStart}); err != nil {
		return fmt.Errorf("writing the copy: %w", err)
	}
	// Every call the last run left is finished now: a checkpoint here
	// spares the next start these lines even if this run never stops
	// cleanly (a kill -9).
	boot.SaveCopyCheckpoint(e.copy, e.log)
	e.log.Info("executor started", slog.String("name", e.set.Name), slog.String("slip", e.slipFP),
		slog.Int("bookEntries", e.ledger.Size()))
	e.bookFullWhy() // a book already full says so at once (bookfull.go)
	return nil
}
