package approval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
)

// EndSlip withdraws the open requests of one slip — pending, and approved
// but unused — and takes their queue files down; another slip's request
// stays; a call still waiting gets NoChannel; the copy records each end as
// withdrawn; a closed hub ends nothing.
func TestEndSlip(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		h, _ := w.start(Options{}, false)
		other := call("c3", `{"path":"c"}`)
		other.Slip = canon.Fingerprint([]byte("another slip"))

		// c1 waits; c2's request was approved while no call waited on it
		// (its call was cancelled); c3 is under another slip.
		waiting := hold(t.Context(), h, call("c1", `{"path":"a"}`))
		ctx, cancel := context.WithCancel(t.Context())
		gone := hold(ctx, h, call("c2", `{"path":"b"}`))
		kept := hold(t.Context(), h, other)
		synctest.Wait()
		cancel()
		if r := <-gone; !errors.Is(r.err, context.Canceled) {
			t.Fatalf("the cancelled call: %+v %v", r.res, r.err)
		}
		files, _, err := Waiting(w.queue, time.Now())
		if err != nil || len(files) != 3 {
			t.Fatalf("waiting: %v %+v", err, files)
		}
		byArgs := map[string]string{}
		for _, f := range files {
			var b bytes.Buffer
			if err := json.Compact(&b, f.Arguments); err != nil {
				t.Fatal(err)
			}
			byArgs[b.String()] = f.ID
		}
		w.answerFile(byArgs[`{"path":"b"}`], true)
		time.Sleep(DefaultPoll)
		synctest.Wait()

		if n := h.EndSlip(slipFP); n != 2 {
			t.Fatalf("EndSlip ended %d requests, want 2", n)
		}
		if r := <-waiting; r.err != nil || r.res.Outcome != NoChannel {
			t.Fatalf("the waiting call: %+v %v", r.res, r.err)
		}
		synctest.Wait()
		if w.fileExists(byArgs[`{"path":"a"}`]) || w.fileExists(byArgs[`{"path":"b"}`]) {
			t.Error("a withdrawn request's file is still in the queue")
		}
		if !w.fileExists(byArgs[`{"path":"c"}`]) {
			t.Error("the other slip's request file was taken down")
		}
		var ended []string
		for _, ln := range w.lines() {
			if ln.Kind == copylog.KindApprovalEnd {
				if ln.Reason != copylog.EndWithdrawn {
					t.Errorf("end reason %q, want %q", ln.Reason, copylog.EndWithdrawn)
				}
				ended = append(ended, ln.Request)
			}
		}
		slices.Sort(ended)
		want := []string{byArgs[`{"path":"a"}`], byArgs[`{"path":"b"}`]}
		slices.Sort(want)
		if !slices.Equal(ended, want) {
			t.Errorf("the copy ends %v, want %v", ended, want)
		}
		if n := h.EndSlip(slipFP); n != 0 {
			t.Errorf("a second EndSlip ended %d", n)
		}
		h.Close()
		if r := <-kept; !errors.Is(r.err, ErrClosed) {
			t.Fatalf("the other slip's call at close: %+v %v", r.res, r.err)
		}
		if n := h.EndSlip(other.Slip); n != 0 {
			t.Errorf("a closed hub ended %d", n)
		}
	})
}
