//go:build integration

package deploy

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

// These tests need the real kube-apiserver of scripts/testenv/kube-apiserver.sh (KUBECONFIG set by
// its `start`); scripts/test.sh starts it. Without it they fail: nothing here is faked.

const testNamespace = "agents"

var appsDeployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

func adminConfig(t *testing.T) *rest.Config {
	t.Helper()
	path := os.Getenv("KUBECONFIG")
	if path == "" {
		t.Fatal(`KUBECONFIG is not set: start the test servers first: eval "$(./scripts/testenv/servers.sh start)" in the repository's folder (it builds them once)`)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	return cfg
}

func ensureNamespace(t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: testNamespace}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating namespace %s: %v", testNamespace, err)
	}
}

// apply sends every rendered document to the API server: dry-run only, or for real.
func apply(t *testing.T, cfg *rest.Config, manifest string, dryRun bool) []string {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, doc := range docSplit.Split(manifest, -1) {
		if strings.TrimSpace(stripComments(doc)) == "" {
			continue
		}
		js, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(js); err != nil {
			t.Fatal(err)
		}
		gvk := obj.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatalf("%s: no mapping: %v", gvk, err)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			ri = dyn.Resource(m.Resource).Namespace(testNamespace)
		}
		// Server-side apply, as `kubectl apply --server-side [--dry-run=server]` sends it.
		force := true
		opts := metav1.PatchOptions{FieldManager: "mcp-executor-deploy-test", FieldValidation: "Strict", Force: &force}
		if dryRun {
			opts.DryRun = []string{metav1.DryRunAll}
		}
		_, err = ri.Patch(context.Background(), obj.GetName(), types.ApplyPatchType, js, opts)
		if err != nil {
			t.Errorf("the API server refused %s %s: %v", gvk.Kind, obj.GetName(), err)
			continue
		}
		kinds = append(kinds, gvk.Kind)
	}
	return kinds
}

// TestServerSideDryRun: every document of every value set is accepted by a real API server.
func TestServerSideDryRun(t *testing.T) {
	cfg := adminConfig(t)
	cs := kubernetes.NewForConfigOrDie(cfg)
	ensureNamespace(t, cs)
	for _, tc := range []struct {
		name  string
		files []string
		sets  []string
	}{
		{"defaults", nil, nil},
		{"example", []string{"values-example.yaml"}, nil},
		{"secrets", nil, []string{"keys.source=secrets", "keys.secrets={exec-keys}", "networkPolicy.enabled=true"}},
		{"emptyDir", nil, []string{"state.type=emptyDir", "compare.enabled=false"}},
		{"approvals", nil, []string{"approvals.kubernetes.enabled=true", "approvals.kubernetes.approvers[0].kind=User", "approvals.kubernetes.approvers[0].name=alice"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := render(t, tc.files, tc.sets...)
			if err != nil {
				t.Fatal(err)
			}
			// A Pod is admitted only when its service account exists, as after a real apply: create
			// the ServiceAccount for real, then dry-run everything.
			apply(t, cfg, onlyKind(out, "ServiceAccount"), false)
			kinds := apply(t, cfg, out, true)
			if len(kinds) < 4 {
				t.Fatalf("only %v were sent", kinds)
			}
		})
	}
	// The checked-in manifests too.
	b, err := os.ReadFile("mcp-executor.yaml")
	if err != nil {
		t.Fatal(err)
	}
	apply(t, cfg, onlyKind(string(b), "ServiceAccount"), false)
	apply(t, cfg, string(b), true)
}

// onlyKind keeps the documents of one kind.
func onlyKind(manifest, kind string) string {
	var keep []string
	for _, doc := range docSplit.Split(manifest, -1) {
		if strings.Contains(doc, "\nkind: "+kind+"\n") {
			keep = append(keep, doc)
		}
	}
	return strings.Join(keep, "\n---\n")
}

// TestServiceAccountGetsItsSecretsOnly applies the chart's RBAC for real, then acts as the executor's
// service account with a token the API server issues for it: get on the named Secrets works; another
// Secret, list and watch are refused.
func TestServiceAccountGetsItsSecretsOnly(t *testing.T) {
	cfg := adminConfig(t)
	cs := kubernetes.NewForConfigOrDie(cfg)
	ensureNamespace(t, cs)
	ctx := context.Background()
	out, err := render(t, nil, "keys.source=secrets", "keys.secrets={exec-keys,server-token}")
	if err != nil {
		t.Fatal(err)
	}
	apply(t, cfg, onlyKind(out, "ServiceAccount")+"\n---\n"+onlyKind(out, "Role")+"\n---\n"+onlyKind(out, "RoleBinding"), false)
	for _, name := range []string{"exec-keys", "server-token", "someone-elses"} {
		_, err := cs.CoreV1().Secrets(testNamespace).Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			StringData: map[string]string{"value": "not-a-real-secret"},
		}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	exp := int64(600)
	tr, err := cs.CoreV1().ServiceAccounts(testNamespace).CreateToken(ctx, "agent-mcp-executor",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("issuing a token for the executor's service account: %v", err)
	}
	saCfg := rest.AnonymousClientConfig(cfg)
	saCfg.BearerToken = tr.Status.Token
	sa := kubernetes.NewForConfigOrDie(saCfg)
	for _, name := range []string{"exec-keys", "server-token"} {
		if _, err := sa.CoreV1().Secrets(testNamespace).Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("get secret %s as the executor: %v", name, err)
		}
	}
	if _, err := sa.CoreV1().Secrets(testNamespace).Get(ctx, "someone-elses", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("get of a Secret outside the Role: want forbidden, got %v", err)
	}
	if _, err := sa.CoreV1().Secrets(testNamespace).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("list secrets: want forbidden, got %v", err)
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if w, err := sa.CoreV1().Secrets(testNamespace).Watch(wctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		if w != nil {
			w.Stop()
		}
		t.Errorf("watch secrets: want forbidden, got %v", err)
	}
	if _, err := sa.CoreV1().Pods(testNamespace).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("list pods: want forbidden, got %v", fmt.Sprint(err))
	}
}

// TestServerRefusesBadDocument shows the dry run has teeth: a Deployment with a member its type lacks
// is refused by the server's strict field validation.
func TestServerRefusesBadDocument(t *testing.T) {
	cfg := adminConfig(t)
	ensureNamespace(t, kubernetes.NewForConfigOrDie(cfg))
	out, err := render(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(onlyKind(out, "Deployment"), "  replicas: 1\n", "  replicas: 1\n  replicaz: 2\n", 1)
	if bad == onlyKind(out, "Deployment") {
		t.Fatal("test set-up: replicas line not found")
	}
	js, err := yaml.YAMLToJSON([]byte(bad))
	if err != nil {
		t.Fatal(err)
	}
	dyn := dynamic.NewForConfigOrDie(cfg)
	force := true
	_, err = dyn.Resource(appsDeployments).Namespace(testNamespace).Patch(context.Background(), "agent-mcp-executor",
		types.ApplyPatchType, js, metav1.PatchOptions{FieldManager: "mcp-executor-deploy-test", FieldValidation: "Strict",
			Force: &force, DryRun: []string{metav1.DryRunAll}})
	if err == nil || !strings.Contains(err.Error(), "replicaz") {
		t.Fatalf("a Deployment with an unknown field: want a strict-validation refusal, got %v", err)
	}
}
