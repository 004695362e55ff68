package held

import (
	"fmt"
	"log/slog"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
	"github.com/seed-6e06167c/mcp-executor/sidecar/approval"
	"github.com/seed-6e06167c/mcp-executor/sidecar/approvalkube"
	"github.com/seed-6e06167c/mcp-executor/sidecar/page"
	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
)

// Options are what OpenApprovals asks the channels with.
type Options struct {
	Settings *settings.Settings
	Copy     *copylog.Log
	// Slip is the slip the calls act under: when it asks for the
	// person's approval (WantsPasskey), the page's channel is opened.
	Slip *slip.Slip
	// ApproveSession approves every held call of this process.
	ApproveSession bool
	// Redact is how the arguments are shown (approval.Options.Redact).
	Redact func([]byte) []byte
	Logger *slog.Logger
}

// WantsPasskey reports whether the slip asks for the person's own approval
// of some call (its requires names an approval).
func WantsPasskey(sl *slip.Slip) bool {
	for _, c := range sl.Requires {
		if c.Need == "approval" {
			return true
		}
	}
	return false
}

// OpenApprovals makes the queue and the hub, after the recovery of
// unfinished calls: the hub rebuilds its requests from the copy and asks
// the pending ones again. The channels are the queue folder, the person's
// page when the slip asks for their approval, and the Kubernetes channel
// the settings name. It returns nil when no tool rule holds calls, the
// copy holds no request and the slip asks for no approval.
func OpenApprovals(o Options) (*approval.Hub, error) {
	set, log := o.Settings, o.Logger
	lines := o.Copy.ApprovalLines() // the copy keeps only its approval lines (copylog reads line by line)
	wants := WantsPasskey(o.Slip)
	if !holdsAny(set) && !hasRequests(lines) && !wants {
		if o.ApproveSession {
			log.Warn("--approve-session is given, and no tool rule holds calls for approval")
		}
		return nil, nil
	}
	q, err := approval.NewQueue(set.Approvals.Queue, 0, log)
	if err != nil {
		return nil, err
	}
	channels := []approval.Channel{q}
	if wants {
		// The page acts only on requests that carry a prepared approval:
		// an open channel that would never answer a rule's approval would
		// otherwise hide "approval-no-channel".
		sl := o.Slip
		channels = append(channels, page.NewChannel(set.Approvals.Queue, func() *slip.Slip { return sl }, 0, log))
	}
	kube, err := approvalkube.FromSettings(set, log)
	if err != nil {
		return nil, fmt.Errorf("approvals: the Kubernetes channel (approvals.kubernetes): %w", err)
	}
	if kube != nil {
		channels = append(channels, kube)
	}
	hub, err := approval.NewHub(approval.Options{Copy: o.Copy, Channels: channels,
		PendingAfter: set.Approvals.PendingAfter, ApproveSession: o.ApproveSession, Logger: log, Redact: o.Redact}, lines)
	if err != nil {
		return nil, fmt.Errorf("approvals: rebuilding the requests from the copy: %w", err)
	}
	if o.ApproveSession {
		log.Warn("--approve-session: every call held for approval in this process is approved without asking anyone; each such answer is recorded with channel \"session\"")
	}
	return hub, nil
}

// holdsAny reports whether some tool rule holds calls for approval.
func holdsAny(set *settings.Settings) bool {
	for _, t := range set.Tools {
		if t.Approve != nil {
			return true
		}
	}
	return false
}

func hasRequests(lines []copylog.Line) bool {
	for _, ln := range lines {
		if ln.Kind == copylog.KindApprovalRequest {
			return true
		}
	}
	return false
}
