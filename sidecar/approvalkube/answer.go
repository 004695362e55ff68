package approvalkube

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Item is one ApprovalRequest as a person sees it.
type Item struct {
	Name       string `json:"name"`
	RequestID  string `json:"requestId"`
	Executor   string `json:"executor"`
	Tool       string `json:"tool"`
	Action     string `json:"action"`
	Sentence   string `json:"sentence"`
	Arguments  string `json:"arguments,omitempty"`
	ExpiresAt  string `json:"expiresAt"`
	Answer     string `json:"answer,omitempty"`
	AnsweredBy string `json:"answeredBy,omitempty"`
}

// Approver answers ApprovalRequests as the user of its credentials (a person's kubeconfig).
type Approver struct {
	ns  string
	ri  dynamic.ResourceInterface
	cs  kubernetes.Interface
	now func() time.Time
}

// NewApprover makes an approver for the requests in namespace.
func NewApprover(cfg *rest.Config, namespace string) (*Approver, error) {
	if namespace == "" {
		return nil, fmt.Errorf("approvalkube: the namespace of the ApprovalRequests is required")
	}
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "mcp-executor approve"
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("approvalkube: client for %s: %w", cfg.Host, err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("approvalkube: client for %s: %w", cfg.Host, err)
	}
	return &Approver{ns: namespace, ri: dyn.Resource(GVR).Namespace(namespace), cs: cs, now: time.Now}, nil
}

// WhoAmI is the user name the API server knows the approver's credentials by (a SelfSubjectReview),
// the name an answer's status.answeredBy must hold.
func (a *Approver) WhoAmI(ctx context.Context) (string, error) {
	r, err := a.cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("approvalkube: asking the API server who these credentials are (SelfSubjectReview): %w", err)
	}
	if r.Status.UserInfo.Username == "" {
		return "", fmt.Errorf("approvalkube: the API server gave no user name for these credentials")
	}
	return r.Status.UserInfo.Username, nil
}

// Waiting lists the requests nobody has answered that have not expired, soonest expiry first.
func (a *Approver) Waiting(ctx context.Context) ([]Item, error) {
	list, err := a.ri.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("approvalkube: listing ApprovalRequests in %s: %w", a.ns, err)
	}
	now := a.now()
	var items []Item
	for i := range list.Items {
		it := itemOf(&list.Items[i])
		if it.Answer != "" {
			continue
		}
		if exp, err := time.Parse(time.RFC3339Nano, it.ExpiresAt); err == nil && !now.Before(exp) {
			continue
		}
		items = append(items, it)
	}
	sort.Slice(items, func(i, j int) bool { return items[i].ExpiresAt < items[j].ExpiresAt })
	return items, nil
}

func itemOf(u *unstructured.Unstructured) Item {
	s := func(path ...string) string { v, _, _ := unstructured.NestedString(u.Object, path...); return v }
	return Item{Name: u.GetName(), RequestID: s("spec", "requestId"), Executor: s("spec", "executor"), Tool: s("spec", "tool"),
		Action: s("spec", "action"), Sentence: s("spec", "sentence"), Arguments: s("spec", "arguments"),
		ExpiresAt: s("spec", "expiresAt"), Answer: s("status", "answer"), AnsweredBy: s("status", "answeredBy")}
}

// Answer answers the request named by its object name or its request id: it writes the status with
// the answer and the approver's own user name. The API server refuses it when the approver may not
// answer (RBAC) or the request is answered already (the first answer stands).
func (a *Approver) Answer(ctx context.Context, nameOrID string, approved bool, reason string) (Item, error) {
	name := nameOrID
	if !strings.HasPrefix(nameOrID, "req-") {
		name = ObjectName(nameOrID)
	}
	who, err := a.WhoAmI(ctx)
	if err != nil {
		return Item{}, err
	}
	status := map[string]any{"answer": AnswerDeclined, "answeredBy": who}
	if approved {
		status["answer"] = AnswerApproved
	}
	if reason != "" {
		status["reason"] = reason
	}
	body, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		return Item{}, err
	}
	u, err := a.ri.Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{FieldManager: "mcp-executor-approve"}, "status")
	if err != nil {
		return Item{}, fmt.Errorf("approvalkube: answering ApprovalRequest %s/%s as %s: %w", a.ns, name, who, err)
	}
	return itemOf(u), nil
}
