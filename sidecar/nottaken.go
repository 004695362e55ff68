package sidecar

import "github.com/seed-6e06167c/mcp-executor/sidecar/wire"

// notTaken is one reason a call or request is answered 1001 (not taken):
// the label its metric counts it under and the message the client reads,
// declared together so that no label is guessed from a message.
type notTaken struct {
	label, message string
}

// The reasons for a 1001.
var (
	notTakenStopped           = notTaken{"stopped", "not taken: " + ErrStopped.Error()}
	notTakenDraining          = notTaken{"draining", "not taken: the executor is stopping"}
	notTakenMaxWaiting        = notTaken{"max-waiting", "not taken: too many calls are waiting"}
	notTakenMaxBytes          = notTaken{"max-bytes-waiting", "not taken: the calls in flight hold too many bytes (maxBytesWaiting)"}
	notTakenNotRecorded       = notTaken{"not-recorded", "not taken: the executor could not record the call"}
	notTakenRequestNotWritten = notTaken{"not-recorded", "not taken: the executor could not record the request for approval"}
	notTakenApprovalNotKept   = notTaken{"approval-not-kept", "not taken: the executor could not keep the call's approval"}
	notTakenRefusalNotWritten = notTaken{"refusal-not-written", "not taken: the refusal could not be written"}
	notTakenListsWaiting      = notTaken{"lists-waiting", "too many tools/list requests are waiting for the tool server"}
)

// notTakenBookFull is the 1001 of a full book, why saying what to do.
func notTakenBookFull(why string) notTaken { return notTaken{"book-full", "not taken: " + why} }

// replyNotTaken answers the request id 1001 for nt and counts it.
func (s *Session) replyNotTaken(id []byte, nt notTaken) {
	s.e.tel.NotTakenAnswered(nt.label)
	s.replyError(id, wire.CodeNotTaken, nt.message, nil)
}

// replyCallNotTaken frees the call's slot and answers it 1001 for nt.
func (s *Session) replyCallNotTaken(tc *toolCall, nt notTaken) {
	s.freeSlot(tc)
	s.replyNotTaken(tc.clientID, nt)
}
