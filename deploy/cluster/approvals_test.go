//go:build integration

package cluster

import (
	"crypto/sha256"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/keys"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/sidecar/approval"
	"github.com/seed-6e06167c/mcp-executor/sidecar/approvalkube"
)

// TestApprovalRequests installs the chart with approvals.kubernetes (its CRD, the executor's Role, the
// approver Role bound to an "approver" service account, the admission policy) and runs the Kubernetes
// channel with a Hub in this process, acting as the executor's own service account with a token the
// API server issues for it: each held call becomes an ApprovalRequest; the executor's account and the
// agent's cannot answer; an approver answers with the Approver (as `mcp-executor approve --kubernetes`
// does) or with `kubectl patch --subresource=status` (as the README shows); an answer naming someone
// else is refused; the first answer stands; a request expires with its timeout; a request that is over
// is deleted.
func TestApprovalRequests(t *testing.T) {
	r := kc.newRelease(t, "approvals", "emptyDir")
	r.set("approvals.kubernetes", map[string]any{"enabled": true,
		"approvers": []any{map[string]any{"kind": "ServiceAccount", "name": "approver", "namespace": r.ns}}})
	ctx := ctxFor(t, 4*time.Minute)
	for _, sa := range []string{"approver"} {
		if _, err := kc.cs.CoreV1().ServiceAccounts(r.ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	r.install(t)

	executorCfg := kc.tokenConfig(t, r.ns, fullname)
	approverCfg := kc.tokenConfig(t, r.ns, "approver")
	agentCfg := kc.tokenConfig(t, r.ns, "default") // what the agent would have if it had any token
	admin := kc.dyn.Resource(approvalkube.GVR).Namespace(r.ns)

	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ch, err := approvalkube.New(approvalkube.Options{Namespace: r.ns, Config: executorCfg, Executor: "cluster test executor", Retry: 200 * time.Millisecond, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	copyKey, err := keys.ParseCopyKey(keys.NewCopyKey())
	if err != nil {
		t.Fatal(err)
	}
	cp, err := copylog.Open(filepath.Join(t.TempDir(), "copy.jsonl"), copyKey, "cluster test executor")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cp.Close() })
	hub, err := approval.NewHub(approval.Options{Copy: cp, Channels: []approval.Channel{ch}, Logger: logger}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hub.Close)

	sum := sha256.Sum256([]byte("the slip the calls are under"))
	slipFP := canon.B64(sum[:])
	type held struct {
		res approval.Result
		err error
	}
	hold := func(callID, text string, timeout time.Duration) <-chan held {
		out := make(chan held, 1)
		go func() {
			res, err := hub.Hold(ctx, approval.Call{CallID: callID, Tool: "echo", Action: "test.echo", Slip: slipFP,
				Arguments: []byte(`{"text":"` + text + `","apiKey":"sk-do-not-show"}`), Timeout: timeout})
			out <- held{res, err}
		}()
		return out
	}
	waitObject := func(callID string) *unstructured.Unstructured {
		var found *unstructured.Unstructured
		eventually(t, time.Minute, "the ApprovalRequest of call "+callID, func() (bool, error) {
			list, err := admin.List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err
			}
			for i := range list.Items {
				if c, _, _ := unstructured.NestedString(list.Items[i].Object, "spec", "call"); c == callID {
					found = &list.Items[i]
					return true, nil
				}
			}
			return false, nil
		})
		return found
	}
	waitGone := func(name string) {
		eventually(t, time.Minute, "ApprovalRequest "+name+" to be deleted", func() (bool, error) {
			_, err := admin.Get(ctx, name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
	}
	statusPatch := func(answer, who string) []byte {
		b, _ := json.Marshal(map[string]any{"status": map[string]any{"answer": answer, "answeredBy": who}})
		return b
	}
	patchAs := func(cfg *rest.Config, name string, body []byte) error {
		_, err := dynamic.NewForConfigOrDie(cfg).Resource(approvalkube.GVR).Namespace(r.ns).
			Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{}, "status")
		return err
	}

	// 1. Approved by the approver, after the executor's and the agent's accounts were refused.
	first := hold("call-1", "first", 2*time.Minute)
	obj := waitObject("call-1")
	spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
	if spec["tool"] != "echo" || spec["action"] != "test.echo" || spec["executor"] != "cluster test executor" ||
		!strings.Contains(spec["sentence"].(string), "echo") || strings.Contains(spec["arguments"].(string), "sk-do-not-show") {
		t.Errorf("the ApprovalRequest's spec: %v", spec)
	}
	if err := patchAs(executorCfg, obj.GetName(), statusPatch("approved", "system:serviceaccount:"+r.ns+":"+fullname)); !apierrors.IsForbidden(err) {
		t.Errorf("the executor's own account answering: want forbidden, got %v", err)
	}
	if err := patchAs(agentCfg, obj.GetName(), statusPatch("approved", "system:serviceaccount:"+r.ns+":default")); !apierrors.IsForbidden(err) {
		t.Errorf("the namespace's default account answering: want forbidden, got %v", err)
	}
	if _, err := dynamic.NewForConfigOrDie(executorCfg).Resource(approvalkube.GVR).Namespace(r.ns).Update(ctx, obj, metav1.UpdateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the executor's own account updating the request: want forbidden, got %v", err)
	}
	if err := patchAs(approverCfg, obj.GetName(), statusPatch("approved", "someone-else")); err == nil || !strings.Contains(err.Error(), "your own user name") {
		t.Errorf("an answer naming someone else: want refused by the admission policy, got %v", err)
	}
	select {
	case h := <-first:
		t.Fatalf("the call went on before any answer: %+v %v", h.res, h.err)
	default:
	}
	approver, err := approvalkube.NewApprover(approverCfg, r.ns)
	if err != nil {
		t.Fatal(err)
	}
	waiting, err := approver.Waiting(ctx)
	if err != nil || len(waiting) != 1 || waiting[0].Name != obj.GetName() {
		t.Fatalf("the approver's list of waiting requests: %+v %v", waiting, err)
	}
	// The answer with `mcp-executor approve --kubernetes`, as the approver (the image's own binary).
	kubeconfig := kc.kubeconfigFor(t, approverCfg)
	out, errOut, err := kc.run(ctx, nil, kc.executorBinary(), "approve", "--kubernetes", "--namespace", r.ns,
		"--kubeconfig", kubeconfig, "--id", waiting[0].RequestID, "--yes", "--reason", "looks fine")
	if err != nil || !strings.Contains(out, "approved request "+waiting[0].RequestID) {
		t.Fatalf("mcp-executor approve --kubernetes: %v\n%s%s", err, out, errOut)
	}
	h := <-first
	if h.err != nil || h.res.Outcome != approval.Approved || h.res.Answer.Channel != approvalkube.ChannelName ||
		h.res.Answer.Who != "kubernetes user system:serviceaccount:"+r.ns+":approver" {
		t.Fatalf("the held call after the answer: %+v %+v %v", h.res, h.res.Answer, h.err)
	}
	waitGone(obj.GetName())

	// 2. Declined with kubectl, as the README shows, by the approver's kubeconfig.
	second := hold("call-2", "second", 2*time.Minute)
	obj = waitObject("call-2")
	who, errOut, err := kc.run(ctx, nil, "kubectl", "--kubeconfig", kubeconfig, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")
	if err != nil {
		t.Fatalf("kubectl auth whoami: %v %s", err, errOut)
	}
	if out, errOut, err := kc.run(ctx, nil, "kubectl", "--kubeconfig", kubeconfig, "-n", r.ns, "patch", "approvalrequest", obj.GetName(),
		"--subresource=status", "--type=merge", "-p", `{"status":{"answer":"declined","answeredBy":"`+who+`"}}`); err != nil {
		t.Fatalf("kubectl patch: %v\n%s%s", err, out, errOut)
	}
	if h := <-second; h.err != nil || h.res.Outcome != approval.Declined {
		t.Fatalf("the call declined with kubectl: %+v %v", h.res, h.err)
	}
	waitGone(obj.GetName())

	// 3. No answer: the request expires with its timeout and is taken down.
	third := hold("call-3", "third", 3*time.Second)
	obj = waitObject("call-3")
	if h := <-third; h.err != nil || h.res.Outcome != approval.Expired {
		t.Fatalf("the call nobody answered: %+v %v", h.res, h.err)
	}
	waitGone(obj.GetName())

	// 4. The first answer stands and the spec never changes (the CRD's rules), whoever writes.
	made := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"requestId": "made-by-the-test", "executor": "x", "tool": "echo", "action": "test.echo", "argumentsSha256": "x",
		"requestedAt": "2026-01-01T00:00:00.000Z", "expiresAt": "2099-01-01T00:00:00.000Z", "sentence": "x"}}}
	made.SetAPIVersion(approvalkube.Group + "/" + approvalkube.Version)
	made.SetKind(approvalkube.Kind)
	made.SetName("req-made-by-the-test")
	if _, err := admin.Create(ctx, made, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := approver.Answer(ctx, "req-made-by-the-test", false, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := approver.Answer(ctx, "req-made-by-the-test", true, ""); err == nil || !strings.Contains(err.Error(), "first answer stands") {
		t.Errorf("a second, different answer: want refused, got %v", err)
	}
	if _, err := admin.Patch(ctx, "req-made-by-the-test", types.MergePatchType, []byte(`{"spec":{"tool":"other"}}`), metav1.PatchOptions{}); err == nil || !strings.Contains(err.Error(), "never changes") {
		t.Errorf("changing the spec: want refused, got %v", err)
	}
}

// tokenConfig is a client config acting as the service account ns/sa, with a token the API server
// issues for it (as the projected token of a pod of that account would be).
func (c *cluster) tokenConfig(t *testing.T, ns, sa string) *rest.Config {
	t.Helper()
	exp := int64(3600)
	tr, err := c.cs.CoreV1().ServiceAccounts(ns).CreateToken(ctxFor(t, time.Minute), sa,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a token for %s/%s: %v", ns, sa, err)
	}
	cfg := rest.AnonymousClientConfig(c.cfg)
	cfg.BearerToken = tr.Status.Token
	return cfg
}

// kubeconfigFor writes a kubeconfig file for cfg's token.
func (c *cluster) kubeconfigFor(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	text := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: " + cfg.Host +
		"\n    certificate-authority: " + cfg.TLSClientConfig.CAFile + "\nusers:\n- name: u\n  user:\n    token: " + cfg.BearerToken +
		"\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n"
	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := writeFile(p, text); err != nil {
		t.Fatal(err)
	}
	return p
}
