package settings

import (
	"path/filepath"
	"time"
)

// Approvals is how calls held for a person's approval are asked and answered
// (the settings' "approvals" block; defaults when the block is absent).
type Approvals struct {
	Queue        string        // folder of the request files, absolute; default "approvals" beside the executor's copy
	Timeout      time.Duration // how long a held call waits; no answer is a refusal
	Elicit       bool          // ask through the agent's client where it declared elicitation; default true
	PendingAfter time.Duration // 0 = off: else a call still waiting after this long is answered "waiting"
	// Kubernetes, when set, makes each held call an ApprovalRequest custom resource (package
	// sidecar/approvalkube); nil when the block has no "kubernetes".
	Kubernetes *KubernetesApprovals
}

// KubernetesApprovals is the approvals block's "kubernetes": {"namespace": "…"}. The client is the
// settings' kubernetes block's (its kubeconfig), else the pod's in-cluster service account.
type KubernetesApprovals struct {
	Namespace string // where the ApprovalRequests are made
}

// Approve is a tool rule's "approve": every call to the tool is held for a
// person's yes or no.
type Approve struct {
	Timeout time.Duration // 0 = the approvals block's timeout
}

// Defaults and ranges of approvals.
const (
	DefaultApprovalQueue   = "approvals"
	DefaultApprovalTimeout = 120000 * time.Millisecond
)

// defaultApprovals are the approvals of settings with no approvals block. The queue's folder is beside
// the executor's copy (copyPath, absolute): on the executor's own writable state, wherever the settings
// file is. In a pod the settings are a read-only mount of a ConfigMap or a Secret, however they reach the
// chart, and a queue beside them could not be made; the copy's folder is the executor's own volume.
func defaultApprovals(copyPath string) Approvals {
	return Approvals{Queue: filepath.Join(filepath.Dir(copyPath), DefaultApprovalQueue), Timeout: DefaultApprovalTimeout, Elicit: true}
}

func (p *parser) approvals(n *node) error {
	o, err := asObject(n, "queue", "timeout", "elicit", "pendingAfter", "kubernetes")
	if err != nil {
		return err
	}
	a := &p.s.Approvals
	if v := o.get("queue"); v != nil {
		if a.Queue, err = p.path(v); err != nil {
			return err
		}
	}
	ms, err := p.wholeOr(o, "timeout", DefaultApprovalTimeout.Milliseconds(), MinTimeout.Milliseconds(), MaxTimeout.Milliseconds())
	if err != nil {
		return err
	}
	a.Timeout = time.Duration(ms) * time.Millisecond
	if a.Elicit, err = p.boolOr(o, "elicit", true); err != nil {
		return err
	}
	if v := o.get("pendingAfter"); v != nil {
		ms, err := v.whole(0, MaxTimeout.Milliseconds())
		if err != nil {
			return err
		}
		a.PendingAfter = time.Duration(ms) * time.Millisecond
	}
	if v := o.get("kubernetes"); v != nil {
		if a.Kubernetes, err = p.kubernetesApprovals(v); err != nil {
			return err
		}
	}
	return nil
}

// kubernetesApprovals reads approvals.kubernetes: {"namespace": "…"}, the namespace a DNS label.
func (p *parser) kubernetesApprovals(n *node) (*KubernetesApprovals, error) {
	o, err := asObject(n, "namespace")
	if err != nil {
		return nil, err
	}
	v, err := o.required("namespace")
	if err != nil {
		return nil, err
	}
	if v.kind != '"' {
		return nil, &Error{Place: v.place, Reason: "must be text (a namespace), not " + kindName(v.kind)}
	}
	if !isDNSLabel(v.str) {
		return nil, &Error{Place: v.place, Reason: "must be a Kubernetes namespace name: 1 to 63 lower-case letters, digits and '-', starting and ending with a letter or digit"}
	}
	return &KubernetesApprovals{Namespace: v.str}, nil
}

// isDNSLabel reports whether s is an RFC 1123 label, as Kubernetes names namespaces.
func isDNSLabel(s string) bool {
	if len(s) == 0 || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-' && i > 0 && i < len(s)-1:
		default:
			return false
		}
	}
	return true
}

// approve reads a tool rule's "approve": true, false or {"timeout": ms}.
func (p *parser) approve(n *node) (*Approve, error) {
	switch n.kind {
	case 'b':
		if !n.bool {
			return nil, nil
		}
		return &Approve{}, nil
	case '{':
		o, err := asObject(n, "timeout")
		if err != nil {
			return nil, err
		}
		ap := &Approve{}
		if v := o.get("timeout"); v != nil {
			ms, err := v.whole(MinTimeout.Milliseconds(), MaxTimeout.Milliseconds())
			if err != nil {
				return nil, err
			}
			ap.Timeout = time.Duration(ms) * time.Millisecond
		}
		return ap, nil
	}
	return nil, &Error{Place: n.place, Reason: `must be true, false or {"timeout": ms}, not ` + kindName(n.kind)}
}

// ApprovalTimeout is how long a held call to the tool named waits: its own
// approve timeout, else the approvals block's.
func (s *Settings) ApprovalTimeout(tool string) time.Duration {
	if t, ok := s.Tools[tool]; ok && t.Approve != nil && t.Approve.Timeout > 0 {
		return t.Approve.Timeout
	}
	return s.Approvals.Timeout
}
