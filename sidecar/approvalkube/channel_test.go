package approvalkube

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/sidecar/approval"
	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
)

// The channel's traffic with the API server is tested on a real cluster (deploy/cluster
// TestApprovalRequests); these are the parts that need none.

func TestObjectName(t *testing.T) {
	for id, want := range map[string]string{
		"Tu6zL5gROYhDzR1jscvpMw": "req-4eeeb32f9811398843cd1d63b1cbe933",
		"not base64url!":         "req-6e6f742062617365363475726c21",
	} {
		if got := ObjectName(id); got != want {
			t.Errorf("ObjectName(%q) = %q, want %q", id, got, want)
		}
	}
}

func TestLabelValue(t *testing.T) {
	for in, want := range map[string]string{
		"cluster test executor": "cluster-test-executor",
		"-x_y.z-":               "x_y.z",
		"ünïcode":               "ncode",
		"":                      "",
		strings.Repeat("a", 80): strings.Repeat("a", 63),
	} {
		if got := labelValue(in); got != want {
			t.Errorf("labelValue(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAnswerOf(t *testing.T) {
	obj := func(status map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"requestId": "r"}}}
		if status != nil {
			u.Object["status"] = status
		}
		return u
	}
	for _, c := range []struct {
		name    string
		status  map[string]any
		ok, yes bool
		who     string
	}{
		{"no status", nil, false, false, ""},
		{"approved", map[string]any{"answer": "approved", "answeredBy": "alice"}, true, true, "kubernetes user alice"},
		{"declined", map[string]any{"answer": "declined", "answeredBy": "bob"}, true, false, "kubernetes user bob"},
		{"nobody named", map[string]any{"answer": "approved"}, false, false, ""},
		{"other answer", map[string]any{"answer": "yes", "answeredBy": "alice"}, false, false, ""},
		{"answer not text", map[string]any{"answer": true, "answeredBy": "alice"}, false, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, ok := answerOf(obj(c.status), "r")
			if ok != c.ok || (ok && (a.Approved != c.yes || a.Who != c.who || a.Channel != ChannelName || a.Request != "r")) {
				t.Fatalf("answerOf: %+v %v", a, ok)
			}
		})
	}
}

func TestObjectSpec(t *testing.T) {
	ch := &Channel{o: Options{Namespace: "agents", Executor: "test executor"}}
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	r := &approval.Request{ID: "Tu6zL5gROYhDzR1jscvpMw", Call: "c1", Tool: "order", Action: "supplies.order",
		Amount: &record.Amount{Unit: "GBP", Value: 120}, Slip: "slipfp", Arguments: "argsfp",
		RequestedAt: at, ExpiresAt: at.Add(2 * time.Minute), Shown: []byte(`{"total":120}`)}
	u := ch.object(ObjectName(r.ID), r)
	spec := u.Object["spec"].(map[string]any)
	if u.GetName() != "req-4eeeb32f9811398843cd1d63b1cbe933" || u.GetKind() != Kind || u.GetAPIVersion() != "executor.prova.red/v1alpha1" ||
		u.GetLabels()[LabelExecutor] != "test-executor" || spec["requestId"] != r.ID || spec["expiresAt"] != "2026-12-01T09:02:00.000Z" ||
		spec["arguments"] != `{"total":120}` || spec["amount"].(map[string]any)["value"] != int64(120) || !strings.Contains(spec["sentence"].(string), "order") {
		t.Fatalf("the object: %v", u.Object)
	}
	r.Shown = nil // restored from the copy: the arguments are not known
	if _, ok := ch.object("x", r).Object["spec"].(map[string]any)["arguments"]; ok {
		t.Fatal("a restored request's object names arguments")
	}
}

func TestFromSettings(t *testing.T) {
	if ch, err := FromSettings(&settings.Settings{}, nil); ch != nil || err != nil {
		t.Fatalf("no block: %v %v", ch, err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	text := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: 'https://127.0.0.1:6443'}\nusers:\n- name: u\n  user: {token: t}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n"
	if err := os.WriteFile(kubeconfig, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &settings.Settings{Name: "e", Kubernetes: &settings.Kubernetes{Kubeconfig: kubeconfig},
		Approvals: settings.Approvals{Kubernetes: &settings.KubernetesApprovals{Namespace: "agents"}}}
	ch, err := FromSettings(s, nil)
	if err != nil || ch == nil || ch.Name() != "kubernetes" || ch.o.Namespace != "agents" || ch.o.Executor != "e" {
		t.Fatalf("from a kubeconfig: %+v %v", ch, err)
	}
	s.Kubernetes.Kubeconfig = filepath.Join(t.TempDir(), "missing")
	if _, err := FromSettings(s, nil); err == nil || !strings.Contains(err.Error(), "settings kubernetes.kubeconfig") {
		t.Fatalf("a missing kubeconfig: %v", err)
	}
	if _, err := New(Options{}); err == nil || !strings.Contains(err.Error(), "namespace") {
		t.Fatalf("no namespace: %v", err)
	}
}
