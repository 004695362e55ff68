package approval

import "log/slog"

// EndSlip ends every open request (pending, or approved and not yet used)
// held under the slip with this fingerprint, as withdrawn (the copy's end
// reason "withdrawn"; a call still waiting on one gets NoChannel), and
// returns how many it ended. Their channels' Ask contexts end with
// ErrEnded, which takes their queue and page files down, so that a person
// is not left looking at a call that can no longer run. The executor calls
// it when the person cancels the slip (its held calls are refused with
// after-cancellation).
func (h *Hub) EndSlip(slip string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return 0
	}
	n := 0
	for _, e := range h.byID {
		if e.state != stateEnded && e.req.Slip == slip {
			h.end(e, NoChannel)
			n++
		}
	}
	if n > 0 {
		h.log.Info("approval: the requests of a cancelled slip were withdrawn", slog.String("slip", slip), slog.Int("requests", n))
	}
	return n
}
