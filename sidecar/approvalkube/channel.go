// Package approvalkube is the approval channel of Kubernetes: each call held for a person's approval
// becomes an ApprovalRequest custom resource (the CRD in charts/mcp-executor/crds) that the executor
// creates with its own service account, and a person answers by writing the request's status
// subresource — with kubectl, or with `mcp-executor approve --kubernetes` ([Answer]).
//
// Who may do what is Kubernetes RBAC's: the executor's Role allows create, get, list, watch and delete
// on approvalrequests and nothing on approvalrequests/status, so it can never answer; the chart's
// approver Role allows reading the requests and writing their status. The CRD keeps the spec as
// written and the first answer as given, and the chart's ValidatingAdmissionPolicy makes
// status.answeredBy the user name the API server authenticated: the channel takes it as who answered.
package approvalkube

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/sidecar/approval"
)

// ChannelName is the channel's name in the copy's answer lines.
const ChannelName = "kubernetes"

// The custom resource.
const (
	Group    = "executor.prova.red"
	Version  = "v1alpha1"
	Kind     = "ApprovalRequest"
	Resource = "approvalrequests"
)

// GVR is the ApprovalRequest resource.
var GVR = schema.GroupVersionResource{Group: Group, Version: Version, Resource: Resource}

// Answers as status.answer writes them.
const (
	AnswerApproved = "approved"
	AnswerDeclined = "declined"
)

// LabelExecutor is the label that marks the requests an executor made (its name, made a label value).
const LabelExecutor = "executor.prova.red/executor"

// Options are a channel's settings.
type Options struct {
	Namespace string       // where the requests are made (settings approvals.kubernetes.namespace)
	Config    *rest.Config // nil: the pod's in-cluster service account
	Executor  string       // the executor's name (settings name), shown in each request
	Logger    *slog.Logger // nil: discard
	// Retry is the wait between two tries to watch a request after a failure; 0 = 2 s.
	Retry time.Duration
}

// Channel asks through ApprovalRequests. It implements [approval.Channel] and [approval.Forgetter].
type Channel struct {
	o   Options
	ri  dynamic.ResourceInterface
	log *slog.Logger
}

var (
	_ approval.Channel   = (*Channel)(nil)
	_ approval.Forgetter = (*Channel)(nil)
)

// New makes the channel. Nothing is sent to the API server until a call is held.
func New(o Options) (*Channel, error) {
	if o.Namespace == "" {
		return nil, errors.New("approvalkube: the namespace of the ApprovalRequests is required (settings approvals.kubernetes.namespace)")
	}
	cfg := o.Config
	if cfg == nil {
		c, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("approvalkube: no in-cluster service account (%w); outside a pod, set the settings' kubernetes.kubeconfig", err)
		}
		cfg = c
	}
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "mcp-executor"
	if cfg.Timeout == 0 {
		cfg.Timeout = 30 * time.Second
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("approvalkube: client for %s: %w", cfg.Host, err)
	}
	lg := o.Logger
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	if o.Retry <= 0 {
		o.Retry = 2 * time.Second
	}
	return &Channel{o: o, ri: dyn.Resource(GVR).Namespace(o.Namespace), log: lg}, nil
}

// Name is "kubernetes".
func (c *Channel) Name() string { return ChannelName }

// ObjectName is the ApprovalRequest's name for a request id: "req-" and the id's bytes in hex (a
// request id is base64url, which a Kubernetes name cannot hold).
func ObjectName(requestID string) string {
	if b, err := canon.UnB64(requestID); err == nil {
		return "req-" + hex.EncodeToString(b)
	}
	return "req-" + hex.EncodeToString([]byte(requestID))
}

// Ask creates the request's ApprovalRequest (or takes the one a run before this made for it) and
// watches it until a person answers or ctx ends. When the request is over (cause approval.ErrEnded)
// the object is deleted; when the executor stops (approval.ErrClosed) it stays, to be asked again.
func (c *Channel) Ask(ctx context.Context, r *approval.Request, answer func(approval.Answer)) error {
	name := ObjectName(r.ID)
	obj := c.object(name, r)
	created, err := c.ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: "mcp-executor", FieldValidation: "Strict"})
	if apierrors.IsAlreadyExists(err) {
		created, err = c.ri.Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			if berr := bound(created, obj, !r.Restored()); berr != nil {
				return fmt.Errorf("approvalkube: ApprovalRequest %s/%s is there for another request: %w; delete it to ask again", c.o.Namespace, name, berr)
			}
		}
	}
	if err != nil {
		return fmt.Errorf("approvalkube: creating ApprovalRequest %s/%s: %w", c.o.Namespace, name, err)
	}
	c.log.Info("approval: asked in Kubernetes", slog.String("request", r.ID), slog.String("namespace", c.o.Namespace), slog.String("name", name))
	go c.watch(ctx, r.ID, name, created, answer)
	return nil
}

// object is the ApprovalRequest for r.
func (c *Channel) object(name string, r *approval.Request) *unstructured.Unstructured {
	spec := map[string]any{
		"requestId":       r.ID,
		"executor":        c.o.Executor,
		"call":            r.Call,
		"tool":            r.Tool,
		"action":          r.Action,
		"argumentsSha256": r.Arguments,
		"slip":            r.Slip,
		"requestedAt":     r.RequestedAt.UTC().Format(approval.TimeLayout),
		"expiresAt":       r.ExpiresAt.UTC().Format(approval.TimeLayout),
		"sentence":        approval.Sentence(r.Tool, r.Action, r.Amount, r.Shown),
	}
	if r.Shown != nil {
		spec["arguments"] = string(r.Shown)
	}
	if r.Amount != nil {
		spec["amount"] = map[string]any{"unit": r.Amount.Unit, "value": r.Amount.Value}
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetAPIVersion(Group + "/" + Version)
	u.SetKind(Kind)
	u.SetName(name)
	u.SetLabels(map[string]string{LabelExecutor: labelValue(c.o.Executor)})
	return u
}

// labelValue makes s a label value: at most 63 of its letters, digits, '-', '_' and '.', starting and
// ending with a letter or digit ("" when none is left).
func labelValue(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s) && len(b) < 63; i++ {
		ch := s[i]
		switch {
		case ch >= 'a' && ch <= 'z', ch >= 'A' && ch <= 'Z', ch >= '0' && ch <= '9', ch == '-', ch == '_', ch == '.':
			b = append(b, ch)
		case ch == ' ':
			b = append(b, '-')
		}
	}
	for len(b) > 0 && !alnum(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && !alnum(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return string(b)
}

func alnum(ch byte) bool {
	return ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9'
}

// watch waits for the answer on the object, then, when ctx ends, deletes it if the request is over.
func (c *Channel) watch(ctx context.Context, id, name string, obj *unstructured.Unstructured, answer func(approval.Answer)) {
	defer func() {
		if errors.Is(context.Cause(ctx), approval.ErrEnded) {
			c.remove(name)
		}
	}()
	for {
		if a, ok := answerOf(obj, id); ok {
			answer(a)
			<-ctx.Done()
			return
		}
		next, gone, err := c.next(ctx, name, obj.GetResourceVersion())
		switch {
		case ctx.Err() != nil:
			return
		case gone:
			c.log.Warn("approval: the ApprovalRequest was deleted before an answer; other channels may still answer",
				slog.String("request", id), slog.String("name", name))
			<-ctx.Done()
			return
		case err != nil:
			c.log.Warn("approval: watching an ApprovalRequest failed; trying again", slog.String("request", id), slog.String("error", err.Error()))
			select {
			case <-ctx.Done():
				return
			case <-time.After(c.o.Retry):
			}
			fresh, gerr := c.ri.Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(gerr) {
				c.log.Warn("approval: the ApprovalRequest was deleted before an answer; other channels may still answer",
					slog.String("request", id), slog.String("name", name))
				<-ctx.Done()
				return
			}
			if gerr == nil {
				obj = fresh
			}
		default:
			obj = next
		}
	}
}

// next watches the object from resourceVersion until it changes: the new object, gone when it was
// deleted, or an error (the watch failed or ended; the caller reads the object again).
func (c *Channel) next(ctx context.Context, name, resourceVersion string) (*unstructured.Unstructured, bool, error) {
	w, err := c.ri.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: resourceVersion})
	if err != nil {
		return nil, false, err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, false, ctx.Err()
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil, false, errors.New("the watch ended")
			}
			switch ev.Type {
			case watch.Added, watch.Modified:
				if u, ok := ev.Object.(*unstructured.Unstructured); ok {
					return u, false, nil
				}
			case watch.Deleted:
				return nil, true, nil
			case watch.Error:
				return nil, false, apierrors.FromObject(ev.Object)
			}
		}
	}
}

// answerOf reads the answer in obj's status, if any.
func answerOf(obj *unstructured.Unstructured, id string) (approval.Answer, bool) {
	if rid, _, _ := unstructured.NestedString(obj.Object, "spec", "requestId"); rid != id {
		return approval.Answer{}, false // another object under the name: not an answer to this request
	}
	ans, _, _ := unstructured.NestedString(obj.Object, "status", "answer")
	who, _, _ := unstructured.NestedString(obj.Object, "status", "answeredBy")
	if (ans != AnswerApproved && ans != AnswerDeclined) || who == "" {
		return approval.Answer{}, false
	}
	return approval.Answer{Request: id, Approved: ans == AnswerApproved, Channel: ChannelName, Who: "kubernetes user " + who}, true
}

// remove deletes the object of a request that is over.
func (c *Channel) remove(name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.ri.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		c.log.Warn("approval: deleting an ApprovalRequest that is over", slog.String("name", name), slog.String("error", err.Error()))
	}
}

// Forget deletes the ApprovalRequest of a request that ended while the executor was down.
func (c *Channel) Forget(r *approval.Request) { c.remove(ObjectName(r.ID)) }
