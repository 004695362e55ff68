package held

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
	"github.com/seed-6e06167c/mcp-executor/sidecar/approval"
)

// TestVerdict: every answer of the hub comes to one verdict, the same for a rule's approval and the
// person's own where they share it, with the texts the model reads word for word.
func TestVerdict(t *testing.T) {
	req := &approval.Request{ID: "R1"}
	signed := &record.Record{Kind: "approval", Fingerprint: "A1"}
	rule := &Call{}
	ruleNoWait := &Call{Ask: approval.Call{NoWait: true}}
	passkey := &Call{Ask: approval.Call{Prepared: &slip.Prepared{}}}
	refuse := func(reason, refused, why string, codes ...string) Verdict {
		return Verdict{Kind: Refuse, Reason: reason, Refused: refused, Codes: codes, Why: why}
	}
	closedErr := fmt.Errorf("held: %w", approval.ErrClosed)
	copyErr := errors.New("the copy could not take the request")
	for _, c := range []struct {
		name string
		call *Call
		res  approval.Result
		err  error
		want Verdict
	}{
		{"rule approved", rule, approval.Result{Outcome: approval.Approved, Request: req, Approval: "F1"}, nil,
			Verdict{Kind: Send, Request: req, Detail: record.Detail{Name: "executor.approval", SHA256: "F1"}}},
		{"rule pending", rule, approval.Result{Outcome: approval.Pending, Request: req}, nil, Verdict{Kind: Pending, Request: req}},
		{"rule pending, asked in the call", ruleNoWait, approval.Result{Outcome: approval.Pending, Request: req}, nil,
			Verdict{Kind: Pending, Request: req, Input: true}},
		{"rule declined", rule, approval.Result{Outcome: approval.Declined, Request: req}, nil,
			refuse("other", approval.Declined.Code(), "a person declined this call", approval.Declined.Code())},
		{"rule expired", rule, approval.Result{Outcome: approval.Expired, Request: req}, nil,
			refuse("other", approval.Expired.Code(), "no person approved this call in time", approval.Expired.Code())},
		{"rule burned", rule, approval.Result{Outcome: approval.Burned}, nil,
			refuse("other", approval.Burned.Code(), "the approval this call names was for other arguments: both are refused", approval.Burned.Code())},
		{"rule no channel", rule, approval.Result{Outcome: approval.NoChannel}, nil,
			refuse("other", approval.NoChannel.Code(), "this call needs a person's approval, and no one can be asked: the client cannot show a form and no other channel is open", approval.NoChannel.Code())},
		{"rule used", rule, approval.Result{Outcome: approval.Used}, nil,
			refuse("other", approval.Used.Code(), "the approval this call names was used already", approval.Used.Code())},
		{"rule crowded", rule, approval.Result{Outcome: approval.Crowded}, nil,
			refuse("other", approval.Crowded.Code(), "too many calls wait for a person's approval", approval.Crowded.Code())},
		{"passkey approved", passkey, approval.Result{Outcome: approval.Approved, Request: req, Answer: &approval.Answer{Record: signed}}, nil,
			Verdict{Kind: Send, Request: req, Record: signed}},
		{"passkey plain yes", passkey, approval.Result{Outcome: approval.Approved, Request: req, Answer: &approval.Answer{}}, nil,
			refuse("needs-approval", "needs-approval", "the permission asks for the person's passkey approval of this call; a yes without it proves nothing to the record", "approval-missing")},
		{"passkey expired", passkey, approval.Result{Outcome: approval.Expired, Request: req}, nil,
			refuse("needs-approval", "needs-approval", "the person's passkey did not approve this call in time", "approval-missing", approval.Expired.Code())},
		{"passkey declined", passkey, approval.Result{Outcome: approval.Declined, Request: req}, nil,
			refuse("other", approval.Declined.Code(), "the call was not approved with the person's passkey ("+approval.Declined.Code()+")", approval.Declined.Code())},
		{"passkey pending is no approval", passkey, approval.Result{Outcome: approval.Pending, Request: req}, nil,
			refuse("other", approval.Pending.Code(), "the call was not approved with the person's passkey ("+approval.Pending.Code()+")", approval.Pending.Code())},
		{"withdrawn", rule, approval.Result{}, context.Canceled, Verdict{Kind: Ended, Closed: true, Err: context.Canceled}},
		{"hub closed", passkey, approval.Result{}, closedErr, Verdict{Kind: Ended, Closed: true, Err: closedErr}},
		{"copy failed", rule, approval.Result{}, copyErr, Verdict{Kind: Ended, Err: copyErr}},
	} {
		if got := c.call.Verdict(c.res, c.err); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.want)
		}
	}
}

// TestHoldsCancel: a cancellation ends the wait of every call held, and of a call held after it at once;
// a call no longer tracked is left alone.
func TestHoldsCancel(t *testing.T) {
	hs := NewHolds("slip")
	a, b, gone := New(context.Background(), nil), New(context.Background(), nil), New(context.Background(), nil)
	hs.Track(a)
	hs.Track(b)
	hs.Track(gone)
	hs.Untrack(gone)
	if hs.Cancelled() {
		t.Fatal("cancelled before Cancel")
	}
	end := hs.Cancel()
	if !hs.Cancelled() || a.ctx.Err() != nil {
		t.Fatal("Cancel marks the slip cancelled and leaves the waits to the function it returns")
	}
	end()
	if a.ctx.Err() == nil || b.ctx.Err() == nil || gone.ctx.Err() != nil {
		t.Fatalf("after the cancellation: a %v, b %v, untracked %v", a.ctx.Err(), b.ctx.Err(), gone.ctx.Err())
	}
	late := New(context.Background(), nil)
	hs.Track(late)
	select {
	case <-late.ctx.Done():
	case <-time.After(time.Second):
		t.Fatal("a call held after the cancellation still waits")
	}
}

// TestKept: an approval kept for a call reads back as the same record; forgetting it twice is no error,
// and a call with none reads as none.
func TestKept(t *testing.T) {
	k := Kept{Dir: t.TempDir()}
	if rec, err := k.Read("provared-1-x"); rec != nil || err != nil {
		t.Fatalf("nothing kept: %v %v", rec, err)
	}
	if got := k.Path("provared-1-x"); got != filepath.Join(k.Dir, "provared-1-x.approval") {
		t.Fatalf("path %s", got)
	}
	if err := k.Forget("provared-1-x"); err != nil {
		t.Fatal(err)
	}
}

// TestPendingResult: a call still waiting is told so, in the form its client asked in.
func TestPendingResult(t *testing.T) {
	req := &approval.Request{ID: "R1"}
	got, err := Verdict{Kind: Pending, Request: req}.PendingResult()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": approval.PendingText(req)}},
		"isError": true, "_meta": approval.PendingMeta(req)})
	if string(got) != string(want) {
		t.Errorf("pending result %s, want %s", got, want)
	}
	got, err = Verdict{Kind: Pending, Request: req, Input: true}.PendingResult()
	want, werr := approval.InputRequiredResult(req)
	if err != nil || werr != nil || string(got) != string(want) {
		t.Errorf("input_required result %s (%v), want %s (%v)", got, err, want, werr)
	}
}
