package sidecar

import (
	"log/slog"

	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// outgoing is a tools/call as it goes to the server: under the executor's
// id, with the call id (when callIdInMeta) and the trace context of the
// call's server span in params._meta, made in one pass over the line
// (wire.EditRequest), with its reading, so that nothing reads it again. A
// _meta that cannot take a member (not an object, or holding a name equal
// to the member's under case folding) gets none of that group: the call
// goes as the client wrote it but for its id, and the log says so.
func (tc *toolCall) outgoing(line []byte, m *wire.Message) ([]byte, *wire.Message) {
	var callID []wire.Member
	if tc.s.e.set.CallIDInMeta {
		callID = []wire.Member{{Key: wire.MetaCallID, Value: tc.ourID}}
	}
	trace := tc.tel.ToServer(tc.tool, tc.ourID)
	id := wire.Quote(tc.ourID)
	if out, om, err := wire.EditRequest(line, m, id, append(callID, trace...)); err == nil {
		return out, om
	}
	// Rare: the _meta refuses a group. Each group alone, once: the log
	// names each one refused, and the first that goes in is sent.
	var out []byte
	var om *wire.Message
	for _, g := range []struct {
		metas []wire.Member
		warn  string
	}{
		{callID, "the call id could not be put in the call's _meta; it is sent without it"},
		{trace, "the trace context could not be put in the call's _meta; it is sent without it"},
	} {
		if len(g.metas) == 0 {
			continue
		}
		o, gm, err := wire.EditRequest(line, m, id, g.metas)
		if err != nil {
			tc.log().Warn(g.warn, slog.String("error", err.Error()))
			continue
		}
		if out == nil {
			out, om = o, gm
		}
	}
	if out != nil {
		return out, om
	}
	out, om, err := wire.EditRequest(line, m, id, nil)
	if err != nil {
		// Not a request: cannot be, tools/call is one. Sent under our id.
		return wire.SpliceID(line, m.IDSpan, id), nil
	}
	return out, om
}
