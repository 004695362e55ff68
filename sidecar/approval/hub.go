package approval

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
)

// Channel is one way of asking a person: the queue folder, the agent's
// client (elicitation), the person's page, a Kubernetes ApprovalRequest.
type Channel interface {
	// Name is the channel's name in the copy's answer lines ("queue",
	// "elicitation", "page", "kubernetes", …).
	Name() string
	// Ask publishes r and returns without waiting for the answer. The
	// channel later calls answer at most once for r, from any goroutine,
	// when a person answers; an Answer with an empty Channel is taken as
	// this channel's. ctx ends when r ends (answered through any channel,
	// expired, burned; context.Cause is ErrEnded) or the hub closes (cause
	// ErrClosed: r is asked again at the next start, so a channel that keeps
	// state, such as the queue's file, leaves it). When r is over the channel
	// takes it down (removes its file, cancels its question). An error
	// means the channel could not ask; the call waits on its other channels,
	// and is refused at once when none could ask.
	Ask(ctx context.Context, r *Request, answer func(Answer)) error
}

// Forgetter is a channel that keeps state across a restart, such as the
// queue's files: at a start, Forget takes down what it keeps for a request
// that is over (it ended while the executor was down, or expired by then).
type Forgetter interface {
	Forget(r *Request)
}

// Copy is where the hub records requests, answers, uses and ends:
// *copylog.Log. Append returns once the lines are durable.
type Copy interface {
	Append(lines ...copylog.Line) error
}

// Outcome is what became of a held call.
type Outcome int

// The outcomes of [Hub.Hold].
const (
	Approved  Outcome = iota + 1 // a person said yes: send the call (the use is recorded)
	Declined                     // a person said no
	Expired                      // no answer before the request's expiry
	Burned                       // the call, or the request it names, was burned by other arguments
	Pending                      // still waiting after pendingAfter: answer "waiting" with the request's id
	NoChannel                    // no channel could ask: refused at once, never run
	Used                         // the approval was already used by another call
	Crowded                      // MaxOpen requests are open already: refused at once, never asked
)

var outcomeNames = map[Outcome]string{Approved: "approved", Declined: "declined", Expired: "expired",
	Burned: "burned", Pending: "pending", NoChannel: "no-channel", Used: "used", Crowded: "crowded"}

// Code is the denial code of a refused outcome ("approval-declined", …),
// for the denial's codes and the copy's denial line; "" for Approved and
// Pending. The refusal's reason is "other": the hold is the executor's own
// rule, not the slip's.
func (o Outcome) Code() string {
	switch o {
	case Approved, Pending:
		return ""
	}
	return "approval-" + o.String()
}

func (o Outcome) String() string {
	if s, ok := outcomeNames[o]; ok {
		return s
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Result is what [Hub.Hold] decided for one call.
type Result struct {
	Outcome Outcome
	Request *Request // nil for NoChannel
	Answer  *Answer  // for Approved and Declined
	// Approval is, for Approved, the answer's fingerprint as the copy holds
	// it ([copylog.AnswerFingerprint]): the stub's executor.approval detail.
	Approval string
}

// ErrClosed is returned by Hold and Answer after [Hub.Close], and is the
// cause (context.Cause) of the end of a channel's Ask context when the hub
// closes: the request is not over, and is asked again at the next start.
var ErrClosed = errors.New("approval: the hub is closed")

// ErrEnded is the cause of the end of a channel's Ask context when the
// request is over (answered, expired, burned, used).
var ErrEnded = errors.New("approval: the request ended")

// Options are a hub's settings.
type Options struct {
	Copy         Copy          // required
	Channels     []Channel     // asked for every held call, besides each call's own
	PendingAfter time.Duration // 0 = off
	// ApproveSession approves every held call of this process (stdio/serve
	// --approve-session): the answer's channel is "session".
	ApproveSession bool
	Redact         Redact // nil = RedactSecrets; for the arguments a person is shown
	// MaxOpen is how many requests may be open (pending, or approved and
	// unused) at once; 0 = DefaultMaxOpen. With pendingAfter, calls return
	// while their requests stay open, so maxWaiting does not bound them.
	MaxOpen int
	Logger  *slog.Logger // nil = discard
}

// DefaultMaxOpen is the default of Options.MaxOpen.
const DefaultMaxOpen = 256

// ChannelSession is the channel of the answers --approve-session gives.
const ChannelSession = "session"

type state int

const (
	statePending state = iota
	stateApproved
	stateEnded
)

type entry struct {
	req         *Request
	state       state
	outcome     Outcome // when ended: Declined, Expired, Burned, Used, NoChannel (withdrawn)
	answer      *Answer
	answerFP    string
	waiters     int
	undelivered bool          // ended with no call waiting: the next identical call is told
	done        chan struct{} // closed when the state leaves pending
	ctx         context.Context
	cancel      context.CancelCauseFunc
	asking      map[string]bool
	timer       *time.Timer
	forget      time.Time
}

// Hub holds calls for approval and takes the first answer from any channel.
type Hub struct {
	o      Options
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelCauseFunc

	mu        sync.Mutex
	byID      map[string]*entry
	byBinding map[string][]*entry
	closed    bool
}

// NewHub makes a hub and rebuilds its requests from the copy's approval
// lines (copylog.Log.ApprovalLines at a start, nil for a new copy; other
// lines are passed over). Requests still
// waiting are asked again through the hub's channels; those past their
// expiry are ended as expired (an approval-end line). The hub lives until
// [Hub.Close].
func NewHub(o Options, lines []copylog.Line) (*Hub, error) {
	if o.Copy == nil {
		return nil, errors.New("approval: NewHub needs the copy to record requests in")
	}
	lg := o.Logger
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	h := &Hub{o: o, log: lg, ctx: ctx, cancel: cancel, byID: map[string]*entry{}, byBinding: map[string][]*entry{}}
	if err := h.restore(lines); err != nil {
		cancel(ErrClosed)
		return nil, err
	}
	return h, nil
}

// Close ends every request's asking and refuses later holds; calls waiting
// in Hold return ErrClosed. Requests stay in the copy for the next start.
func (h *Hub) Close() {
	h.mu.Lock()
	h.closed = true
	for _, e := range h.byID {
		if e.timer != nil {
			e.timer.Stop()
		}
	}
	h.mu.Unlock()
	h.cancel(ErrClosed)
}

func now() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }

func (h *Hub) newEntry(r *Request) *entry {
	e := &entry{req: r, done: make(chan struct{}), asking: map[string]bool{}}
	e.ctx, e.cancel = context.WithCancelCause(h.ctx)
	e.forget = r.ExpiresAt.Add(r.ExpiresAt.Sub(r.RequestedAt))
	h.byID[r.ID] = e
	h.byBinding[r.Binding] = append(h.byBinding[r.Binding], e)
	return e
}

// startTimer ends e as expired at its expiry. Called with h.mu held.
func (h *Hub) startTimer(e *entry) {
	e.timer = time.AfterFunc(time.Until(e.req.ExpiresAt), func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if e.state != stateEnded && !h.closed {
			h.end(e, Expired)
		}
	})
}

var endReasons = map[Outcome]string{Expired: copylog.EndExpired, Burned: copylog.EndBurned, NoChannel: copylog.EndWithdrawn}

// end ends e with outcome (Expired, Burned or NoChannel), writing the end
// line. Called with h.mu held.
func (h *Hub) end(e *entry, outcome Outcome) {
	if err := h.o.Copy.Append(copylog.Line{Kind: copylog.KindApprovalEnd, When: now(), Reason: endReasons[outcome],
		ApprovalFields: copylog.ApprovalFields{Request: e.req.ID}}); err != nil {
		// The copy refuses every later line too, so the executor takes no more calls;
		// the request still ends here so that it lets nothing through.
		h.log.Error("approval: the copy did not take the end of a request", slog.String("request", e.req.ID), slog.String("error", err.Error()))
	}
	h.finish(e, outcome)
	h.log.Info("approval: request ended", slog.String("request", e.req.ID), slog.String("tool", e.req.Tool), slog.String("outcome", outcome.String()))
}

// finish moves e to its end without writing a line. Called with h.mu held.
func (h *Hub) finish(e *entry, outcome Outcome) {
	if e.state == statePending {
		close(e.done)
	}
	e.state, e.outcome = stateEnded, outcome
	// Withdrawn (no channel could ask) and used requests tell no later call
	// anything: an identical call makes a new request.
	e.undelivered = e.waiters == 0 && outcome != Used && outcome != NoChannel
	if e.timer != nil {
		e.timer.Stop()
	}
	if t := now(); t.After(e.req.ExpiresAt) {
		e.forget = t.Add(e.req.ExpiresAt.Sub(e.req.RequestedAt))
	}
	e.cancel(ErrEnded)
}

// sweep forgets requests ended long enough ago. Called with h.mu held.
func (h *Hub) sweep() {
	t := now()
	for id, e := range h.byID {
		if e.state == stateEnded && t.After(e.forget) {
			delete(h.byID, id)
			list := h.byBinding[e.req.Binding]
			for i, x := range list {
				if x == e {
					list = append(list[:i:i], list[i+1:]...)
					break
				}
			}
			if len(list) == 0 {
				delete(h.byBinding, e.req.Binding)
			} else {
				h.byBinding[e.req.Binding] = list
			}
		}
	}
}

// Hold holds c until a person answers, its request ends, pendingAfter
// passes or ctx ends (then ctx.Err(); the request stays, for a later
// identical call). An error other than ctx's means the copy could not take a
// line: refuse the call. For Approved, the use is recorded before Hold
// returns: write the call's sent line next.
func (h *Hub) Hold(ctx context.Context, c Call) (Result, error) {
	args, binding, err := c.fingerprint()
	if err != nil {
		return Result{}, err
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return Result{}, ErrClosed
	}
	h.sweep()
	if c.Named != "" {
		if e := h.byID[c.Named]; e != nil {
			if e.req.Binding != binding {
				if e.state != stateEnded {
					h.end(e, Burned)
				}
				h.mu.Unlock()
				h.log.Warn("approval: a call named a request with other arguments; both are refused",
					slog.String("request", e.req.ID), slog.String("call", c.CallID))
				return Result{Outcome: Burned, Request: e.req}, nil
			}
			return h.wait(ctx, e, c)
		}
		h.log.Info("approval: a call named a request the executor does not know", slog.String("call", c.CallID))
	}
	if e := h.attachable(binding); e != nil {
		return h.wait(ctx, e, c)
	}
	t := now()
	r := &Request{ID: canon.NewID(), Call: c.CallID, Tool: c.Tool, Action: c.Action, Amount: c.Amount, Slip: c.Slip,
		Arguments: args, Binding: binding, RequestedAt: t, ExpiresAt: t.Add(c.Timeout).Truncate(time.Millisecond),
		Shown: h.shownArguments(c.Arguments), Prepared: c.Prepared}
	channels := append(append([]Channel(nil), h.o.Channels...), c.Channels...)
	if len(channels) == 0 && !h.o.ApproveSession {
		h.mu.Unlock()
		return Result{Outcome: NoChannel}, nil
	}
	if h.open() >= h.maxOpen() {
		h.mu.Unlock()
		h.log.Warn("approval: too many requests are open; the call is refused", slog.String("call", c.CallID), slog.Int("open", h.maxOpen()))
		return Result{Outcome: Crowded}, nil
	}
	if err := h.o.Copy.Append(requestLine(r)); err != nil {
		h.mu.Unlock()
		return Result{}, fmt.Errorf("approval: recording request for call %s: %w", c.CallID, err)
	}
	e := h.newEntry(r)
	h.startTimer(e)
	if h.o.ApproveSession {
		if err := h.take(e, Answer{Request: r.ID, Approved: true, Channel: ChannelSession, Who: "--approve-session of this executor", When: t}); err != nil {
			h.mu.Unlock()
			return Result{}, err
		}
		return h.wait(ctx, e, c)
	}
	for _, ch := range channels {
		e.asking[ch.Name()] = true
	}
	e.waiters++ // this call waits on it: no identical call attaches meanwhile
	h.mu.Unlock()
	if h.ask(e, channels) == 0 {
		h.mu.Lock()
		e.waiters--
		if e.state == statePending {
			h.end(e, NoChannel)
		}
		h.mu.Unlock()
		return Result{Outcome: NoChannel, Request: r}, nil
	}
	h.mu.Lock()
	e.waiters--
	return h.wait(ctx, e, c)
}

// open counts the requests not ended. Called with h.mu held.
func (h *Hub) open() int {
	n := 0
	for _, e := range h.byID {
		if e.state != stateEnded {
			n++
		}
	}
	return n
}

func (h *Hub) maxOpen() int {
	if h.o.MaxOpen > 0 {
		return h.o.MaxOpen
	}
	return DefaultMaxOpen
}

// attachable is the request an identical call attaches to: one no call
// waits on that is pending, approved and unused, or ended with no call told.
// Called with h.mu held.
func (h *Hub) attachable(binding string) *entry {
	list := h.byBinding[binding]
	for i := len(list) - 1; i >= 0; i-- {
		e := list[i]
		if e.waiters > 0 {
			continue
		}
		if e.state != stateEnded || e.undelivered {
			return e
		}
	}
	return nil
}

// ask asks every channel, outside h.mu, and returns how many could.
func (h *Hub) ask(e *entry, channels []Channel) int {
	n := 0
	for _, ch := range channels {
		name := ch.Name()
		err := ch.Ask(e.ctx, e.req, func(a Answer) {
			if a.Channel == "" {
				a.Channel = name
			}
			if err := h.Answer(a); err != nil && !errors.Is(err, ErrClosed) {
				h.log.Warn("approval: an answer was not taken", slog.String("channel", name), slog.String("error", err.Error()))
			}
		})
		if err != nil {
			h.log.Warn("approval: a channel could not ask", slog.String("channel", name), slog.String("request", e.req.ID), slog.String("error", err.Error()))
			continue
		}
		n++
	}
	return n
}

// wait waits on e for c. Called with h.mu held; returns with it released.
func (h *Hub) wait(ctx context.Context, e *entry, c Call) (Result, error) {
	if e.state == statePending {
		var extra []Channel
		for _, ch := range c.Channels {
			if !e.asking[ch.Name()] {
				e.asking[ch.Name()] = true
				extra = append(extra, ch)
			}
		}
		e.waiters++
		h.mu.Unlock()
		h.ask(e, extra)
		var pending <-chan time.Time
		if c.NoWait {
			now := make(chan time.Time, 1)
			now <- time.Time{}
			pending = now
		} else if h.o.PendingAfter > 0 {
			t := time.NewTimer(h.o.PendingAfter)
			defer t.Stop()
			pending = t.C
		}
		var err error
		select {
		case <-e.done:
		case <-pending:
		case <-ctx.Done():
			err = ctx.Err()
		case <-h.ctx.Done():
			err = ErrClosed
		}
		h.mu.Lock()
		e.waiters--
		if err != nil {
			h.mu.Unlock()
			return Result{}, err
		}
		if e.state == statePending {
			h.mu.Unlock()
			return Result{Outcome: Pending, Request: e.req}, nil
		}
	}
	defer h.mu.Unlock()
	if e.state == stateApproved {
		return h.use(e, c)
	}
	e.undelivered = false
	return Result{Outcome: e.outcome, Request: e.req, Answer: e.answer}, nil
}

// use lets c through on e's approval, recording the use. Called with h.mu held.
func (h *Hub) use(e *entry, c Call) (Result, error) {
	if !now().Before(e.req.ExpiresAt) {
		h.end(e, Expired)
		e.undelivered = false
		return Result{Outcome: Expired, Request: e.req, Answer: e.answer}, nil
	}
	if err := h.o.Copy.Append(copylog.Line{Kind: copylog.KindApprovalUse, When: now(), Call: c.CallID,
		ApprovalFields: copylog.ApprovalFields{Request: e.req.ID, Approval: e.answerFP}}); err != nil {
		return Result{}, fmt.Errorf("approval: recording the use of request %s by call %s: %w", e.req.ID, c.CallID, err)
	}
	h.finish(e, Used)
	return Result{Outcome: Approved, Request: e.req, Answer: e.answer, Approval: e.answerFP}, nil
}

// Answer takes a person's answer to a request: the first answer to a
// pending request is recorded and decides it; any later one is recorded as
// too late. It returns an error when no request has the id, or the copy
// could not take the line (the answer is then not taken). Channels call it
// through the function Ask gives them; the engine calls it for an answer
// that comes with a call (2026-07-28 inputResponses).
func (h *Hub) Answer(a Answer) error {
	if a.When.IsZero() {
		a.When = now()
	}
	a.When = a.When.UTC().Truncate(time.Millisecond)
	if a.Channel == "" || a.Who == "" {
		return fmt.Errorf("approval: an answer to request %s must name its channel and who gave it", a.Request)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return ErrClosed
	}
	e := h.byID[a.Request]
	if e == nil {
		return fmt.Errorf("approval: no request has the id an answer names (channel %s)", a.Channel)
	}
	if e.state != statePending {
		err := h.o.Copy.Append(copylog.Line{Kind: copylog.KindApprovalLate, When: a.When,
			ApprovalFields: copylog.ApprovalFields{Request: e.req.ID, Answer: answerText(a.Approved), Channel: a.Channel, Who: a.Who}})
		h.log.Info("approval: an answer came too late", slog.String("request", e.req.ID), slog.String("channel", a.Channel))
		if err != nil {
			return fmt.Errorf("approval: recording a late answer to request %s: %w", e.req.ID, err)
		}
		return nil
	}
	return h.take(e, a)
}

// take records a as e's answer. Called with h.mu held and e pending.
func (h *Hub) take(e *entry, a Answer) error {
	ln := answerLine(e.req, a)
	fp, err := copylog.AnswerFingerprint(ln)
	if err != nil {
		return fmt.Errorf("approval: answer to request %s: %w", e.req.ID, err)
	}
	if err := h.o.Copy.Append(ln); err != nil {
		return fmt.Errorf("approval: recording the answer to request %s: %w", e.req.ID, err)
	}
	e.answer, e.answerFP = &a, fp
	h.log.Info("approval: answered", slog.String("request", e.req.ID), slog.String("channel", a.Channel), slog.Bool("approved", a.Approved))
	if a.Approved {
		e.state = stateApproved
		close(e.done)
		e.cancel(ErrEnded)
		return nil
	}
	h.finish(e, Declined)
	return nil
}

// restore rebuilds the requests the copy holds.
func (h *Hub) restore(lines []copylog.Line) error {
	h.mu.Lock()
	endedAt := map[*entry]time.Time{}
	for _, ln := range lines {
		if err := h.replay(ln, endedAt); err != nil {
			h.mu.Unlock()
			return err
		}
	}
	ask, forget := h.resume(endedAt)
	h.sweep()
	h.mu.Unlock()
	for _, ch := range h.o.Channels {
		if f, ok := ch.(Forgetter); ok {
			for _, r := range forget {
				f.Forget(r)
			}
		}
	}
	for _, e := range ask {
		h.ask(e, h.o.Channels)
	}
	return nil
}

// replay applies one line of the copy to the requests; endedAt keeps the
// time of each request's last line. h.mu is held.
func (h *Hub) replay(ln copylog.Line, endedAt map[*entry]time.Time) error {
	if e := h.byID[ln.Request]; e != nil && ln.Kind != copylog.KindApprovalLate {
		endedAt[e] = ln.When.UTC()
	}
	switch ln.Kind {
	case copylog.KindApprovalRequest:
		if h.byID[ln.Request] != nil {
			return nil
		}
		h.newEntry(&Request{ID: ln.Request, Call: ln.Call, Tool: ln.Tool, Action: ln.Action, Amount: ln.Amount,
			Slip: ln.Slip, Arguments: ln.Arguments, Binding: ln.Binding, RequestedAt: ln.When.UTC(), ExpiresAt: ln.Expires.UTC()})
	case copylog.KindApprovalAnswer:
		e := h.byID[ln.Request]
		if e == nil || e.state != statePending {
			return nil
		}
		fp, err := copylog.AnswerFingerprint(ln)
		if err != nil {
			return fmt.Errorf("approval: restoring from the copy: line %d: %w", ln.Seq, err)
		}
		e.answer = &Answer{Request: ln.Request, Approved: ln.Answer == copylog.AnswerApproved, Channel: ln.Channel, Who: ln.Who, When: ln.When.UTC()}
		e.answerFP = fp
		if e.answer.Approved {
			e.state = stateApproved
			close(e.done)
		} else {
			h.finish(e, Declined)
		}
	case copylog.KindApprovalUse:
		if e := h.byID[ln.Request]; e != nil && e.state != stateEnded {
			h.finish(e, Used)
		}
	case copylog.KindApprovalEnd:
		if e := h.byID[ln.Request]; e != nil && e.state != stateEnded {
			h.finish(e, map[string]Outcome{copylog.EndExpired: Expired, copylog.EndBurned: Burned, copylog.EndWithdrawn: NoChannel}[ln.Reason])
		}
	}
	return nil
}

// resume, after the copy is replayed, ends what expired while the
// executor was stopped, starts the timers of the rest and returns the
// requests to ask the channels again and those the channels may forget.
// h.mu is held.
func (h *Hub) resume(endedAt map[*entry]time.Time) (ask []*entry, forget []*Request) {
	t := now()
	for _, e := range h.byID {
		if e.state == stateEnded {
			forget = append(forget, e.req)
			last := e.req.ExpiresAt
			if endedAt[e].After(last) {
				last = endedAt[e]
			}
			e.forget = last.Add(e.req.ExpiresAt.Sub(e.req.RequestedAt))
			continue
		}
		if !t.Before(e.req.ExpiresAt) {
			h.end(e, Expired)
			forget = append(forget, e.req)
			continue
		}
		h.startTimer(e)
		if e.state == statePending {
			for _, ch := range h.o.Channels {
				e.asking[ch.Name()] = true
			}
			ask = append(ask, e)
		} else {
			e.cancel(ErrEnded) // approved: nothing to ask
			forget = append(forget, e.req)
		}
	}
	return ask, forget
}
