package sidecar

import (
	"testing"
)

// Every reason for a 1001 carries its own label beside the message the
// client reads: no two messages share a reason by accident, and no label
// is guessed from the text.
func TestNotTakenLabels(t *testing.T) {
	for _, c := range []struct {
		nt             notTaken
		message, label string
	}{
		{notTakenMaxWaiting, "not taken: too many calls are waiting", "max-waiting"},
		{notTakenMaxBytes, "not taken: the calls in flight hold too many bytes (maxBytesWaiting)", "max-bytes-waiting"},
		{notTakenDraining, "not taken: the executor is stopping", "draining"},
		{notTakenNotRecorded, "not taken: the executor could not record the call", "not-recorded"},
		{notTakenRequestNotWritten, "not taken: the executor could not record the request for approval", "not-recorded"},
		{notTakenApprovalNotKept, "not taken: the executor could not keep the call's approval", "approval-not-kept"},
		{notTakenRefusalNotWritten, "not taken: the refusal could not be written", "refusal-not-written"},
		{notTakenListsWaiting, "too many tools/list requests are waiting for the tool server", "lists-waiting"},
		{notTakenStopped, "not taken: " + ErrStopped.Error(), "stopped"},
		{notTakenBookFull("the book is full"), "not taken: the book is full", "book-full"},
	} {
		if c.nt.message != c.message || c.nt.label != c.label {
			t.Errorf("%+v, want message %q and label %q", c.nt, c.message, c.label)
		}
	}
}
