package copylog

import "github.com/seed-6e06167c/mcp-executor/receipts/record"

// Unfinished is a call the copy shows as sent with no receipt written for it:
// the executor stopped while the call was with the server, or the book could
// not be written. The next start writes its receipt from this.
type Unfinished struct {
	Sent Line // the sent line: call, tool, action, amount, slip, details, time
	// Outcome is the outcome the executor knew when the book could not be
	// written (from the last not-written line), or nil where the executor
	// stopped before the outcome was known.
	Outcome *record.Detail
	// Reason is why the book could not be written, from that line ("" when
	// Outcome is nil).
	Reason string
}

// UnfinishedCalls lists, in the order they were sent, the sent calls that
// have no receipt or late-receipt line.
func UnfinishedCalls(lines []Line) []Unfinished {
	done := make(map[string]bool)
	notWritten := make(map[string]Line)
	for _, ln := range lines {
		switch ln.Kind {
		case KindReceipt, KindLateReceipt:
			done[ln.Call] = true
		case KindNotWritten:
			notWritten[ln.Call] = ln
		}
	}
	var out []Unfinished
	for _, ln := range lines {
		if ln.Kind != KindSent || done[ln.Call] {
			continue
		}
		done[ln.Call] = true // a call id sent twice is listed once
		u := Unfinished{Sent: ln}
		if nw, ok := notWritten[ln.Call]; ok {
			o := *nw.Outcome
			u.Outcome, u.Reason = &o, nw.Reason
		}
		out = append(out, u)
	}
	return out
}
