package sidecar

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/internal/faultinject"
	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/sidecar/approval"
	"github.com/seed-6e06167c/mcp-executor/sidecar/contentrules"
	"github.com/seed-6e06167c/mcp-executor/sidecar/held"
	"github.com/seed-6e06167c/mcp-executor/sidecar/policy"
	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
	"github.com/seed-6e06167c/mcp-executor/sidecar/telemetry"
)

// Executor is the judge and scribe of one process: it holds the settings,
// the agent's and its own keys, the slip, the book and the copy, and is
// shared by every [Session]. Stubs of all sessions enter the book in the
// order their calls were sent.
type Executor struct {
	log     *slog.Logger
	set     *settings.Settings
	slipFP  string
	agent   jwk.Signer
	exec    jwk.Signer
	book    *book.Book
	ledger  *book.Ledger
	copy    *copylog.Log
	rules   *contentrules.Rules // nil without a rules file
	rulesFP string              // "" without a rules file
	denials *policy.Denials
	tel     *telemetry.Telemetry
	pol     *policy.Policy // tool rules, quotas, redaction; set by begin
	seed    *policy.Seed   // from the copy's read at start, for begin's policy.New; nil after
	hub     *approval.Hub  // the approvals hub; nil when no call is held for approval (hold.go)
	holds   *held.Holds    // the calls held for approval, and the slip's cancellation (cancel.go)
	kept    held.Kept      // approvals kept for the calls about to be sent with them
	// stopWatch stops watching for the slip's cancellation; nil when not watching.
	stopWatch func()

	admitMu  sync.Mutex // the order calls are judged, sent and written in
	lastWhen time.Time  // the latest stub time handed out (never goes back)

	lastPrep *prepSlot      // the place of the call put last in the scribe's order (scribe.go); under admitMu
	commits  sync.WaitGroup // calls put in the scribe's order whose stubs are not yet written and answered

	// bytesWaiting is the bytes of the tool calls in flight in every session,
	// inflight their number; idle is closed when inflight reaches 0 during
	// Drain. Changed under inflightMu.
	inflightMu   sync.Mutex
	bytesWaiting atomic.Int64
	inflight     int
	idle         chan struct{}
	draining     atomic.Bool

	stopped   atomic.Bool
	stoppedCh chan struct{} // closed by stop

	fullAt          int // entries from which no new call is taken (bookfull.go)
	bookFullOnce    sync.Once
	bookFullCh      chan struct{}
	bookFullWhyText atomic.Value
	stopWhy         atomic.Value // string: why stop was called
	bookBroken      atomic.Bool
	closeOnce       sync.Once
	closeErr        error
	closer          func() error
}

// ErrStopped is why a call is not taken after the copy or the book could
// not be written: the executor takes no more calls until it is started
// again.
var ErrStopped = errors.New("the executor takes no more calls until it is started again")

// newExecutor wires the parts together.
func newExecutor(log *slog.Logger, set *settings.Settings, slipFP string, agent, exec jwk.Signer, bk *book.Book, cp *copylog.Log, rules *contentrules.Rules, rulesFP string, tp trace.TracerProvider, mp metric.MeterProvider) *Executor {
	log = orDiscard(log)
	tel := telemetry.New(tp, mp)
	agent = newBoundedSigner(faultinject.Signer(agent), telemetry.KeysAgent, set.SignTimeout, set.SignTries, log).observed(tel)
	exec = newBoundedSigner(faultinject.Signer(exec), telemetry.KeysExec, set.SignTimeout, set.SignTries, log).observed(tel)
	e := &Executor{
		tel: tel,
		log: log, set: set, slipFP: slipFP, agent: agent, exec: exec, book: bk, ledger: bk.Ledger(), copy: cp,
		rules: rules, rulesFP: rulesFP,
		stoppedCh: make(chan struct{}),
		holds:     held.NewHolds(slipFP), kept: held.Kept{Dir: set.Approvals.Queue},
		fullAt: faultinject.FullAt(fullAt), bookFullCh: make(chan struct{}),
	}
	e.denials = policy.NewDenials(set.DenialsPerHour, func(n int64) {
		if err := e.copyAppend(copylog.Line{Kind: copylog.KindDenialsFolded, Count: n}); err != nil {
			e.stop("the copy could not be written: " + err.Error())
		}
	})
	return e
}

// Close waits until every call already sent has its stub, and
// closes what the executor opened. Call it after every session has ended.
func (e *Executor) Close() error {
	e.closeOnce.Do(func() {
		e.commits.Wait()
		e.denials.Close()
		e.closeApprovals()
		if e.stopWatch != nil {
			e.stopWatch()
		}
		if e.closer != nil {
			e.closeErr = e.closer()
		}
	})
	return e.closeErr
}

// stop makes the executor take no more calls.
func (e *Executor) stop(why string) {
	if e.stopped.CompareAndSwap(false, true) {
		e.stopWhy.Store(why)
		e.log.Error("the executor takes no more calls until it is started again", slog.String("why", why))
		close(e.stoppedCh)
	}
}

// Stopped is closed when the executor stops taking calls (the copy or the
// book could not be written, a receipt could not be signed). The process
// should then say so on its health endpoints and exit non-zero, so that it
// is started again; the next start writes from the copy the receipts this
// one could not.
func (e *Executor) Stopped() <-chan struct{} { return e.stoppedCh }

// StopReason says why the executor stopped taking calls ("" while it takes them).
func (e *Executor) StopReason() string {
	why, _ := e.stopWhy.Load().(string)
	return why
}

// stubTime returns now, or the latest time already handed out if the clock
// went back, so that stubs never go back in time along the chain.
// Callers hold admitMu.
func (e *Executor) stubTime() time.Time {
	now := time.Now().UTC().Truncate(time.Second)
	if now.Before(e.lastWhen) {
		now = e.lastWhen
	}
	e.lastWhen = now
	return now
}

// copyAppend appends lines to the copy durably, counting them by kind.
func (e *Executor) copyAppend(lines ...copylog.Line) error {
	return e.countCopyLines(e.copy.Append(lines...), lines)
}

// copyAppendUnsynced appends lines the next start rebuilds when they are
// lost (copylog.Log.AppendUnsynced), counting them by kind.
func (e *Executor) copyAppendUnsynced(lines ...copylog.Line) error {
	return e.countCopyLines(e.copy.AppendUnsynced(lines...), lines)
}

func (e *Executor) countCopyLines(err error, lines []copylog.Line) error {
	if err == nil {
		for _, ln := range lines {
			e.tel.CopyLine(string(ln.Kind))
		}
	}
	return err
}

// bookAppended counts an entry appended to the book and its bytes.
func (e *Executor) bookAppended(ctx context.Context, kind string, line book.Line) {
	n := int64(0)
	if b, err := line.Bytes(); err == nil {
		n = int64(len(b)) + 1
	}
	e.tel.BookEntry(ctx, kind, n)
}

// bookAppendedSigned counts a stub line AppendSigned wrote and its bytes
// (measured, not put together again).
func (e *Executor) bookAppendedSigned(ctx context.Context, line book.SignedStub) {
	n := int64(0)
	if l, err := line.Len(); err == nil {
		n = int64(l) + 1
	}
	e.tel.BookEntry(ctx, "stub", n)
}
