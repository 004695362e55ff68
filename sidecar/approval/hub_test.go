package approval

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/seed-6e06167c/mcp-executor/copylog"
)

func TestApprovedThroughQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		_, got, id := w.holdOne(call("c1", `{"path":"a.txt","token":"s3cret"}`))
		data, _ := os.ReadFile(filepath.Join(w.queue, FileName(id)))
		if strings.Contains(string(data), "s3cret") || !strings.Contains(string(data), `"token": "[redacted]"`) || !strings.Contains(string(data), `"approved": null`) {
			t.Fatalf("request file:\n%s", data)
		}
		w.answerFile(id, true)
		time.Sleep(DefaultPoll)
		r := <-got
		if r.err != nil || r.res.Outcome != Approved || r.res.Request.ID != id || r.res.Answer.Channel != ChannelQueue ||
			!strings.HasPrefix(r.res.Answer.Who, "uid ") {
			t.Fatalf("hold: %+v %v", r.res, r.err)
		}
		synctest.Wait()
		if w.fileExists(id) {
			t.Fatal("the answered request's file is still in the queue")
		}
		lines := w.lines()
		if k := kinds(lines); !reflect.DeepEqual(k, []string{"approval-request", "approval-answer", "approval-use"}) {
			t.Fatalf("copy kinds %v", k)
		}
		ans, ok := copylog.FindAnswer(lines, r.res.Approval)
		if !ok || ans.Request != id || ans.Binding != r.res.Request.Binding || lines[2].Approval != r.res.Approval || lines[2].Call != "c1" {
			t.Fatalf("answer in the copy: %v %+v", ok, lines)
		}
	})
}

func TestDeclinedAndExpired(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		h, got, id := w.holdOne(call("c1", `{"path":"a"}`))
		w.answerFile(id, false)
		time.Sleep(DefaultPoll)
		if r := <-got; r.err != nil || r.res.Outcome != Declined || r.res.Answer == nil || r.res.Answer.Approved {
			t.Fatalf("declined: %+v %v", r.res, r.err)
		}

		start := time.Now()
		got = hold(t.Context(), h, call("c2", `{"path":"b"}`))
		r := <-got
		if r.err != nil || r.res.Outcome != Expired || time.Since(start) != time.Minute {
			t.Fatalf("expired: %+v %v after %v", r.res, r.err, time.Since(start))
		}
		synctest.Wait()
		if w.fileExists(r.res.Request.ID) {
			t.Fatal("the expired request's file is still in the queue")
		}
		lines := w.lines()
		if k := kinds(lines); !reflect.DeepEqual(k, []string{"approval-request", "approval-answer", "approval-request", "approval-end"}) ||
			lines[1].Answer != copylog.AnswerDeclined || lines[3].Reason != copylog.EndExpired {
			t.Fatalf("copy %v", k)
		}
	})
}

func TestFirstAnswerWins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		page := newManual("page")
		h, _ := w.start(Options{Channels: []Channel{page}}, false)
		client := newManual(ChannelElicitation)
		c := call("c1", `{}`)
		c.Channels = []Channel{client}
		got := hold(t.Context(), h, c)
		synctest.Wait()
		id := w.onlyRequest()
		client.answer(id, true)
		page.answer(id, false)
		r := <-got
		if r.err != nil || r.res.Outcome != Approved || r.res.Answer.Channel != ChannelElicitation || r.res.Answer.Who != "someone at the elicitation" {
			t.Fatalf("hold: %+v %v", r.res, r.err)
		}
		synctest.Wait()
		if w.fileExists(id) || !errors.Is(page.ends[id], ErrEnded) || !errors.Is(client.ends[id], ErrEnded) {
			t.Fatalf("the channels were not told the request ended: %v %v", page.ends, client.ends)
		}
		// The page's late answer and the call's use of the approval are
		// written by different goroutines: both come after the answer
		// that won, in either order.
		lines := w.lines()
		k := kinds(lines)
		if len(k) != 4 || !reflect.DeepEqual(k[:2], []string{"approval-request", "approval-answer"}) ||
			!reflect.DeepEqual(sortedCopy(k[2:]), []string{"approval-late", "approval-use"}) {
			t.Fatalf("copy %v %+v", k, lines)
		}
		late := lines[2]
		if late.Kind != copylog.KindApprovalLate {
			late = lines[3]
		}
		if late.Channel != "page" || late.Answer != copylog.AnswerDeclined {
			t.Fatalf("the late answer: %+v", late)
		}
	})
}

func TestBurned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		h, got, id := w.holdOne(call("c1", `{"path":"a"}`))
		other := call("c2", `{"path":"b"}`)
		other.Named = id
		r, err := h.Hold(t.Context(), other)
		if err != nil || r.Outcome != Burned || r.Request.ID != id {
			t.Fatalf("the other call: %+v %v", r, err)
		}
		if r := <-got; r.err != nil || r.res.Outcome != Burned {
			t.Fatalf("the waiting call: %+v %v", r.res, r.err)
		}
		synctest.Wait()
		if w.fileExists(id) {
			t.Fatal("the burned request's file is still in the queue")
		}
		// An answer after the burn is too late; the identical call named again is refused.
		if err := h.Answer(Answer{Request: id, Approved: true, Channel: "page", Who: "p"}); err != nil {
			t.Fatal(err)
		}
		again := call("c3", `{"path":"a"}`)
		again.Named = id
		if r, err := h.Hold(t.Context(), again); err != nil || r.Outcome != Burned {
			t.Fatalf("the identical call after the burn: %+v %v", r, err)
		}
		if k := kinds(w.lines()); !reflect.DeepEqual(k, []string{"approval-request", "approval-end", "approval-late"}) {
			t.Fatalf("copy %v", k)
		}
	})
}

func TestPendingAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		h, _ := w.start(Options{PendingAfter: 10 * time.Second}, false)
		r, err := h.Hold(t.Context(), call("c1", `{"path":"a"}`))
		if err != nil || r.Outcome != Pending {
			t.Fatalf("first: %+v %v", r, err)
		}
		id := r.Request.ID
		// The same answer while pending, to the same request, with or without naming it.
		r, err = h.Hold(t.Context(), call("c2", `{ "path" : "a" }`))
		if err != nil || r.Outcome != Pending || r.Request.ID != id {
			t.Fatalf("second: %+v %v", r, err)
		}
		named := call("c3", `{"path":"a"}`)
		named.Named = id
		got := hold(t.Context(), h, named)
		synctest.Wait()
		w.answerFile(id, true)
		time.Sleep(DefaultPoll)
		if r := <-got; r.err != nil || r.res.Outcome != Approved || r.res.Request.ID != id {
			t.Fatalf("third: %+v %v", r.res, r.err)
		}
		// Used once: the next identical call makes a new request.
		r, err = h.Hold(t.Context(), call("c4", `{"path":"a"}`))
		if err != nil || r.Outcome != Pending || r.Request.ID == id {
			t.Fatalf("after the use: %+v %v", r, err)
		}
		// Named after its use: refused as used.
		named.CallID = "c5"
		if r, err := h.Hold(t.Context(), named); err != nil || r.Outcome != Used {
			t.Fatalf("named after the use: %+v %v", r, err)
		}
	})
}

func TestApprovedWhileNobodyWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		h, _ := w.start(Options{PendingAfter: time.Second}, false)
		r, _ := h.Hold(t.Context(), call("c1", `{"path":"a"}`))
		id := r.Request.ID
		w.answerFile(id, true)
		time.Sleep(DefaultPoll)
		synctest.Wait()
		r, err := h.Hold(t.Context(), call("c2", `{"path":"a"}`))
		if err != nil || r.Outcome != Approved || r.Request.ID != id {
			t.Fatalf("retry: %+v %v", r, err)
		}
		// Declined while nobody waits: the next identical call is told, once.
		r, _ = h.Hold(t.Context(), call("c3", `{"path":"b"}`))
		w.answerFile(r.Request.ID, false)
		time.Sleep(DefaultPoll)
		synctest.Wait()
		if r, err := h.Hold(t.Context(), call("c4", `{"path":"b"}`)); err != nil || r.Outcome != Declined {
			t.Fatalf("after the decline: %+v %v", r, err)
		}
		if r, err := h.Hold(t.Context(), call("c5", `{"path":"b"}`)); err != nil || r.Outcome != Pending {
			t.Fatalf("asked again: %+v %v", r, err)
		}
	})
}

func TestCancelledCallLeavesRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		h, _ := w.start(Options{}, false)
		ctx, cancel := context.WithCancel(t.Context())
		got := hold(ctx, h, call("c1", `{"path":"a"}`))
		synctest.Wait()
		cancel()
		if r := <-got; !errors.Is(r.err, context.Canceled) {
			t.Fatalf("cancelled: %+v %v", r.res, r.err)
		}
		id := w.onlyRequest()
		got = hold(t.Context(), h, call("c2", `{"path":"a"}`))
		synctest.Wait()
		w.answerFile(id, true)
		time.Sleep(DefaultPoll)
		if r := <-got; r.err != nil || r.res.Outcome != Approved || r.res.Request.ID != id {
			t.Fatalf("retry: %+v %v", r.res, r.err)
		}
	})
}

func TestTwoIdenticalCallsWaitingAskTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		h, _ := w.start(Options{}, false)
		a := hold(t.Context(), h, call("c1", `{"path":"a"}`))
		b := hold(t.Context(), h, call("c2", `{"path":"a"}`))
		synctest.Wait()
		files, _, _ := Waiting(w.queue, time.Now())
		if len(files) != 2 {
			t.Fatalf("%d requests for two waiting calls", len(files))
		}
		w.answerFile(files[0].ID, true)
		w.answerFile(files[1].ID, false)
		time.Sleep(DefaultPoll)
		ra, rb := <-a, <-b
		if ra.res.Outcome == rb.res.Outcome || ra.res.Request.ID == rb.res.Request.ID {
			t.Fatalf("outcomes %v %v", ra.res.Outcome, rb.res.Outcome)
		}
	})
}

func TestNoChannel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		h, _ := w.start(Options{}, true)
		if r, err := h.Hold(t.Context(), call("c1", `{}`)); err != nil || r.Outcome != NoChannel || r.Request != nil {
			t.Fatalf("no channel: %+v %v", r, err)
		}
		broken := newManual("page")
		broken.fail = errors.New("the page is not running")
		c := call("c2", `{}`)
		c.Channels = []Channel{broken}
		if r, err := h.Hold(t.Context(), c); err != nil || r.Outcome != NoChannel {
			t.Fatalf("no channel could ask: %+v %v", r, err)
		}
		lines := w.lines()
		if k := kinds(lines); !reflect.DeepEqual(k, []string{"approval-request", "approval-end"}) || lines[1].Reason != copylog.EndWithdrawn {
			t.Fatalf("copy %v", k)
		}
		// A withdrawn request tells the next identical call nothing: it is asked anew.
		page := newManual("page")
		c.Channels = []Channel{page}
		got := hold(t.Context(), h, c)
		synctest.Wait()
		if len(page.asks) != 1 {
			t.Fatalf("the identical call after a withdrawn request was not asked: %d", len(page.asks))
		}
		for id := range page.asks {
			page.answer(id, true)
		}
		if r := <-got; r.err != nil || r.res.Outcome != Approved {
			t.Fatalf("after the withdrawn request: %+v %v", r.res, r.err)
		}
	})
}

func TestApproveSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		h, _ := w.start(Options{ApproveSession: true}, true)
		r, err := h.Hold(t.Context(), call("c1", `{}`))
		if err != nil || r.Outcome != Approved || r.Answer.Channel != ChannelSession || !strings.Contains(r.Answer.Who, "--approve-session") {
			t.Fatalf("approve-session: %+v %v", r, err)
		}
		if k := kinds(w.lines()); !reflect.DeepEqual(k, []string{"approval-request", "approval-answer", "approval-use"}) {
			t.Fatalf("copy %v", k)
		}
	})
}

func TestBadAnswerFiles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		_, got, id := w.holdOne(call("c1", `{"path":"a"}`))
		path := filepath.Join(w.queue, FileName(id))
		orig, _ := os.ReadFile(path)
		for _, bad := range []string{
			`{"approved": true`,
			strings.Replace(string(orig), `"approved": null`, `"approved": "yes"`, 1),
			strings.Replace(strings.Replace(string(orig), `"approved": null`, `"approved": true`, 1), `"write_file"`, `"delete_file"`, 1),
			strings.Replace(strings.Replace(string(orig), `"approved": null`, `"approved": true`, 1), `"path": "a"`, `"path": "b"`, 1),
			strings.Replace(string(orig), `"approved": null`, `"approved": true, "approved": true`, 1),
			strings.Replace(string(orig), `"approved": null`, `"approved": true, "answeredWith": "someone"`, 1),
		} {
			w.writeFile(id, []byte(bad))
			time.Sleep(DefaultPoll)
			synctest.Wait()
			select {
			case r := <-got:
				t.Fatalf("a bad file was taken as an answer: %+v\n%s", r.res, bad)
			default:
			}
		}
		w.writeFile(id, orig)
		w.answerFile(id, false)
		time.Sleep(DefaultPoll)
		if r := <-got; r.res.Outcome != Declined {
			t.Fatalf("after the bad files: %+v %v", r.res, r.err)
		}
	})
}

// TestRestart: an answer given while the executor was down is used by the
// identical call afterwards, and never twice.
func TestRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		h, log := w.start(Options{PendingAfter: time.Second}, false)
		r, err := h.Hold(t.Context(), call("c1", `{"path":"a"}`))
		if err != nil || r.Outcome != Pending {
			t.Fatalf("first run: %+v %v", r, err)
		}
		id := r.Request.ID
		stop(h, log)
		synctest.Wait()
		if !w.fileExists(id) {
			t.Fatal("stopping took the request file away")
		}
		w.answerFile(id, true) // while the executor is down

		h, log = w.start(Options{PendingAfter: time.Second}, false)
		time.Sleep(DefaultPoll)
		synctest.Wait()
		r, err = h.Hold(t.Context(), call("c2", `{"path":"a"}`))
		if err != nil || r.Outcome != Approved || r.Request.ID != id || !r.Request.Restored() {
			t.Fatalf("second run: %+v %v", r, err)
		}
		synctest.Wait()
		if w.fileExists(id) {
			t.Fatal("the request file outlived its use")
		}
		stop(h, log)

		h, _ = w.start(Options{PendingAfter: time.Second}, false)
		r, err = h.Hold(t.Context(), call("c3", `{"path":"a"}`))
		if err != nil || r.Outcome != Pending || r.Request.ID == id {
			t.Fatalf("third run used the approval again: %+v %v", r, err)
		}
		uses := 0
		for _, ln := range w.lines() {
			if ln.Kind == copylog.KindApprovalUse {
				uses++
			}
		}
		if uses != 1 {
			t.Fatalf("%d uses in the copy", uses)
		}
	})
}

func TestRestartAfterExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		h, log := w.start(Options{PendingAfter: time.Second}, false)
		r, _ := h.Hold(t.Context(), call("c1", `{"path":"a"}`))
		id := r.Request.ID
		stop(h, log)
		w.answerFile(id, true)
		time.Sleep(2 * time.Minute)
		h, _ = w.start(Options{PendingAfter: time.Second}, false)
		if r, err := h.Hold(t.Context(), call("c2", `{"path":"a"}`)); err != nil || r.Outcome != Expired || r.Request.ID != id {
			t.Fatalf("after the expiry: %+v %v", r, err)
		}
		synctest.Wait()
		if w.fileExists(id) {
			t.Fatal("the expired request's file is still in the queue")
		}
		if r, err := h.Hold(t.Context(), call("c3", `{"path":"a"}`)); err != nil || r.Outcome != Pending || r.Request.ID == id {
			t.Fatalf("asked again: %+v %v", r, err)
		}
	})
}

func TestUnknownNamedAndClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		h, _ := w.start(Options{PendingAfter: time.Second}, false)
		c := call("c1", `{}`)
		c.Named = "AAAAAAAAAAAAAAAAAAAAAA"
		if r, err := h.Hold(t.Context(), c); err != nil || r.Outcome != Pending {
			t.Fatalf("unknown id: %+v %v", r, err)
		}
		if err := h.Answer(Answer{Request: "AAAAAAAAAAAAAAAAAAAAAA", Approved: true, Channel: "x", Who: "y"}); err == nil {
			t.Fatal("an answer to no request was taken")
		}
		if err := h.Answer(Answer{Request: "AAAAAAAAAAAAAAAAAAAAAA", Approved: true}); err == nil {
			t.Fatal("an answer naming no channel was taken")
		}
		got := hold(t.Context(), h, call("c2", `{"x":1}`))
		synctest.Wait()
		h.Close()
		if r := <-got; !errors.Is(r.err, ErrClosed) {
			t.Fatalf("waiting at close: %v", r.err)
		}
		if _, err := h.Hold(t.Context(), call("c3", `{}`)); !errors.Is(err, ErrClosed) {
			t.Fatalf("after close: %v", err)
		}
		if _, err := h.Hold(t.Context(), call("c4", `{"x":NaN}`)); err == nil {
			t.Fatal("arguments with no RFC 8785 form were held")
		}
	})
}

// TestNoWait is the 2026-07-28 flow: the call is answered input_required at
// once; the retry brings the client's answer and names the request.
func TestNoWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		h, _ := w.start(Options{}, false)
		c := call("c1", `{"path":"a"}`)
		c.NoWait = true
		r, err := h.Hold(t.Context(), c)
		if err != nil || r.Outcome != Pending {
			t.Fatalf("first: %+v %v", r, err)
		}
		raw, _ := InputRequiredResult(r.Request)
		params := `{"name":"write_file","arguments":{"path":"a"},"inputResponses":{"red.prova/approval":{"action":"accept","content":{"approve":true}}},"requestState":"` + r.Request.ID + `"}`
		id, yes, found, err := InputAnswer([]byte(params))
		if err != nil || !found || !yes || id != r.Request.ID || !strings.Contains(string(raw), id) {
			t.Fatalf("input answer: %q %v %v %v", id, yes, found, err)
		}
		if err := h.Answer(Answer{Request: id, Approved: yes, Channel: ChannelInput, Who: WhoClient}); err != nil {
			t.Fatal(err)
		}
		retry := call("c2", `{"path":"a"}`)
		retry.Named, retry.NoWait = id, true
		r, err = h.Hold(t.Context(), retry)
		if err != nil || r.Outcome != Approved || r.Answer.Channel != ChannelInput {
			t.Fatalf("retry: %+v %v", r, err)
		}
		synctest.Wait()
		if w.fileExists(id) {
			t.Fatal("the queue still shows the answered request")
		}
	})
}

func TestOutcomeCodes(t *testing.T) {
	want := map[Outcome]string{Approved: "", Pending: "", Declined: "approval-declined", Expired: "approval-expired",
		Burned: "approval-burned", NoChannel: "approval-no-channel", Used: "approval-used", Crowded: "approval-crowded"}
	for o, code := range want {
		if o.Code() != code {
			t.Errorf("%v: code %q, want %q", o, o.Code(), code)
		}
	}
}

// TestRestartAfterAnswer: the answer reached the copy before the stop, the
// use comes after the start.
func TestRestartAfterAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		page := newManual("page")
		h, log := w.start(Options{PendingAfter: time.Second, Channels: []Channel{page}}, false)
		r, _ := h.Hold(t.Context(), call("c1", `{"path":"a"}`))
		id := r.Request.ID
		page.answer(id, true)
		synctest.Wait()
		stop(h, log)
		h, _ = w.start(Options{PendingAfter: time.Second}, false)
		r, err := h.Hold(t.Context(), call("c2", `{"path":"a"}`))
		if err != nil || r.Outcome != Approved || r.Request.ID != id || r.Answer.Channel != "page" {
			t.Fatalf("after the start: %+v %v", r, err)
		}
		if ans, ok := copylog.FindAnswer(w.lines(), r.Approval); !ok || ans.Request != id {
			t.Fatal("the approval the restored hub names is not in the copy")
		}
	})
}

func TestCrowded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		h, _ := w.start(Options{PendingAfter: time.Second, MaxOpen: 2}, false)
		for i, args := range []string{`{"n":1}`, `{"n":2}`} {
			if r, err := h.Hold(t.Context(), call(fmt.Sprint("c", i), args)); err != nil || r.Outcome != Pending {
				t.Fatalf("%s: %+v %v", args, r, err)
			}
		}
		if r, err := h.Hold(t.Context(), call("c3", `{"n":3}`)); err != nil || r.Outcome != Crowded {
			t.Fatalf("third: %+v %v", r, err)
		}
		// An identical call still attaches to its open request.
		if r, err := h.Hold(t.Context(), call("c4", `{"n":1}`)); err != nil || r.Outcome != Pending {
			t.Fatalf("attach: %+v %v", r, err)
		}
		time.Sleep(time.Minute)
		if r, err := h.Hold(t.Context(), call("c5", `{"n":3}`)); err != nil || r.Outcome != Pending {
			t.Fatalf("after the expiry: %+v %v", r, err)
		}
	})
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}
