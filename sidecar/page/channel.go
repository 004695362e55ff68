package page

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/consent"
	"github.com/seed-6e06167c/mcp-executor/receipts/passkey"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
	"github.com/seed-6e06167c/mcp-executor/sidecar/approval"
)

// Channel is the executor's side of the page: an approval.Channel that
// publishes each request carrying a prepared approval as <id>.prepared in
// the queue folder and answers it from <id>.signed once the passkey
// signature there checks against the slip's issuer. A request without a
// prepared approval is not this channel's (Ask does nothing).
type Channel struct {
	dir     string
	current func() *slip.Slip
	poll    time.Duration
	log     *slog.Logger
}

// NewChannel is the channel over the queue folder dir (settings
// approvals.queue, already made by approval.NewQueue). current gives the
// slip in force (its issuer checks the signatures); poll 0 means
// approval.DefaultPoll; logger nil discards.
func NewChannel(dir string, current func() *slip.Slip, poll time.Duration, logger *slog.Logger) *Channel {
	if poll <= 0 {
		poll = approval.DefaultPoll
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Channel{dir: dir, current: current, poll: poll, log: logger}
}

// Name is the channel's name in the copy's answer lines.
func (c *Channel) Name() string { return ChannelPage }

// Ask writes r's prepared file and watches for its signed answer.
func (c *Channel) Ask(ctx context.Context, r *approval.Request, answer func(approval.Answer)) error {
	if r.Prepared == nil {
		return nil
	}
	p, err := PreparedFor(r)
	if err != nil {
		return err
	}
	data, err := encode(p)
	if err != nil {
		return fmt.Errorf("page: encoding the prepared file of %s: %w", r.ID, err)
	}
	// An answer left from before is no answer to this request: it must go before the request is offered.
	if err := os.Remove(filepath.Join(c.dir, SignedName(r.ID))); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("page: removing the old answer of %s before asking: %w", r.ID, err)
	}
	if err := approval.WriteFileAtomic(c.dir, PreparedName(r.ID), data); err != nil {
		return err
	}
	go c.watch(ctx, r, answer)
	return nil
}

// Forget removes the files of a request that is over.
func (c *Channel) Forget(r *approval.Request) { c.remove(r.ID) }

func (c *Channel) remove(id string) {
	for _, name := range []string{PreparedName(id), SignedName(id)} {
		path := filepath.Join(c.dir, name)
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			c.log.Warn("page: could not remove a file of a request", slog.String("file", path), slog.String("error", err.Error()))
		}
	}
}

// watch reads <id>.signed until it holds an answer that checks, or r ends.
// A request restored at a start carries no prepared approval, so the files
// are taken down whenever r's context ends.
func (c *Channel) watch(ctx context.Context, r *approval.Request, answer func(approval.Answer)) {
	defer c.remove(r.ID)
	tick := time.NewTicker(c.poll)
	defer tick.Stop()
	path := filepath.Join(c.dir, SignedName(r.ID))
	var lastBad string
	for {
		a, bad, ok := c.read(r, path)
		if ok {
			answer(a)
			<-ctx.Done()
			return
		}
		if bad != "" && bad != lastBad {
			lastBad = bad
			c.log.Warn("page: a signed answer does not check", slog.String("request", r.ID), slog.String("file", path), slog.String("reason", bad))
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// read reads the signed file: an answer, or why it is none ("" when there
// is no file yet).
func (c *Channel) read(r *approval.Request, path string) (approval.Answer, string, bool) {
	var f Signed
	if err := readStrict(path, &f); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return approval.Answer{}, "", false
		}
		return approval.Answer{}, err.Error(), false
	}
	a, err := CheckSigned(f, r.ID, r.Prepared, c.current(), time.Now())
	if err != nil {
		return approval.Answer{}, err.Error(), false
	}
	return a, "", true
}

// CheckSigned checks a signed answer to request id, whose prepared
// approval is prep, against the slip s in force at now: an approval with
// consent.CheckApproval (the approvals already used are the engine's to
// check, in the check before acting), a decline with the issuer's passkey
// over DeclineSigningInput. The answer names the passkey's thumbprint as
// who answered.
func CheckSigned(f Signed, id string, prep *slip.Prepared, s *slip.Slip, now time.Time) (approval.Answer, error) {
	if s == nil || prep == nil {
		return approval.Answer{}, errors.New("page: no slip in force or no prepared approval to check the answer against")
	}
	if f.Request != id {
		return approval.Answer{}, fmt.Errorf("page: the answer is to request %q, not %s", f.Request, id)
	}
	who := "passkey " + s.Issuer.Key.Thumbprint
	switch {
	case f.Approval != nil && f.Declined == nil:
		v, err := recordValue(f.Approval)
		if err != nil {
			return approval.Answer{}, fmt.Errorf("page: the approval: %w", err)
		}
		p, err := consent.ProposalOf(prep)
		if err != nil {
			return approval.Answer{}, err
		}
		a, err := consent.CheckApproval(v, s, p, now, nil)
		if err != nil {
			return approval.Answer{}, fmt.Errorf("page: the approval does not check%s: %w", comparedOrigins(recordOrigin(v), s), err)
		}
		// Another Provared signer may prepare its own approval of the same
		// call (another id or time): it is taken when it checks; the stub
		// names whichever approval it carries.
		return approval.Answer{Request: id, Approved: true, Channel: ChannelPage, Who: who, When: now, Record: a.Record}, nil
	case f.Declined != nil && f.Approval == nil:
		as, err := f.Declined.Decode()
		if err != nil {
			return approval.Answer{}, err
		}
		if _, err := passkey.CheckAssertion(s.Issuer.Key, s.Issuer.RPID, s.Issuer.Origin, DeclineSigningInput(prep.Fingerprint), as, nil); err != nil {
			return approval.Answer{}, fmt.Errorf("page: the decline is not the slip issuer's passkey signature%s: %w",
				comparedOrigins(originOf(as.ClientDataJSON), s), err)
		}
		return approval.Answer{Request: id, Approved: false, Channel: ChannelPage, Who: who, When: now}, nil
	}
	return approval.Answer{}, errors.New("page: a signed answer holds exactly one of approval and declined")
}

// comparedOrigins names, for an answer refused by the executor's side, the
// origin the passkey answered on and the slip's, which it was checked
// against, when they differ ("" when they are the same).
func comparedOrigins(answeredOn string, s *slip.Slip) string {
	if answeredOn == s.Issuer.Origin {
		return ""
	}
	return fmt.Sprintf(" (it was signed on the page %q, and the slip names %s)", answeredOn, s.Issuer.Origin)
}
