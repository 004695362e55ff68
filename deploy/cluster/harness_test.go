//go:build integration

package cluster

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/internal/syncbuf"
)

// The tests need the real cluster of scripts/testenv/cluster.sh. Its `start` prints its variables with the
// prefix REAL_CLUSTER_ (REAL_CLUSTER_KUBECONFIG, REAL_CLUSTER_KUBECTL, REAL_CLUSTER_TOOLS, …), apart from
// the kube-apiserver-only cluster the other integration tests use; scripts/test.sh starts it. Without it
// they fail: nothing is faked.
const startCluster = `start the real cluster first: eval "$(./scripts/testenv/servers.sh start cluster vault)" in the repository's folder (it builds them once; ./scripts/test.sh starts every server)`

const (
	executorImage = "localhost/mcp-executor:test"
	chartDir      = "../../charts/mcp-executor"
	releaseName   = "agent"
	fullname      = "agent-mcp-executor"
	socketAddr    = "unix:/run/mcp-executor/executor.sock"
	bridgeInAgent = "/opt/mcp-executor/bin/mcp-executor"
	testClass     = "mcp-executor-test-hostpath"
)

// kc is the cluster, set up once by TestMain.
var kc *cluster

type cluster struct {
	kubeconfig       string
	cfg              *rest.Config
	cs               kubernetes.Interface
	dyn              dynamic.Interface
	apiHost, apiPort string // the API server as a pod reaches it (the node's bridge address)
	tools            string // scripts/testenv: mkimage.sh, cluster.sh
	helm             string
	kubectlBin       string // kubectl of the cluster's version
	images           string // folder of the image archives this run made
}

func TestMain(m *testing.M) {
	c, cleanup, err := setup()
	if err != nil {
		fmt.Fprintf(os.Stderr, "cluster tests: %v\n", err)
		if cleanup != nil {
			cleanup()
		}
		os.Exit(1)
	}
	kc = c
	code := m.Run()
	cleanup()
	os.Exit(code)
}

func setup() (*cluster, func(), error) {
	c := &cluster{kubeconfig: os.Getenv("REAL_CLUSTER_KUBECONFIG")}
	if c.kubeconfig == "" {
		return nil, nil, fmt.Errorf("REAL_CLUSTER_KUBECONFIG is not set: %s", startCluster)
	}
	c.tools = os.Getenv("REAL_CLUSTER_TOOLS")
	if c.tools == "" {
		c.tools = "../../scripts/testenv"
	}
	if c.kubectlBin = os.Getenv("REAL_CLUSTER_KUBECTL"); c.kubectlBin == "" {
		c.kubectlBin = "kubectl"
	}
	var err error
	if c.tools, err = filepath.Abs(c.tools); err != nil {
		return nil, nil, err
	}
	if c.helm, err = helmBin(); err != nil {
		return nil, nil, err
	}
	if c.cfg, err = clientcmd.BuildConfigFromFlags("", c.kubeconfig); err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", c.kubeconfig, err)
	}
	u, err := url.Parse(c.cfg.Host)
	if err != nil {
		return nil, nil, fmt.Errorf("the kubeconfig's server %q: %w", c.cfg.Host, err)
	}
	c.apiHost, c.apiPort = u.Hostname(), u.Port()
	if c.cs, err = kubernetes.NewForConfig(c.cfg); err != nil {
		return nil, nil, err
	}
	if c.dyn, err = dynamic.NewForConfig(c.cfg); err != nil {
		return nil, nil, err
	}
	if _, err := c.cs.Discovery().ServerVersion(); err != nil {
		return nil, nil, fmt.Errorf("the API server at %s is not reachable (%w): %s", c.cfg.Host, err, startCluster)
	}
	if c.images, err = os.MkdirTemp("", "mcp-executor-cluster-"); err != nil {
		return nil, nil, err
	}
	cleanup := func() { os.RemoveAll(c.images) }
	if err := c.buildImages(); err != nil {
		return nil, cleanup, err
	}
	return c, cleanup, nil
}

// helmBin finds helm: on PATH, else where scripts/test.sh installs it ($MCP_EXECUTOR_TOOLS_DIR/bin, by
// default ~/.cache/mcp-executor-tools/bin), else in ~/go/bin.
func helmBin() (string, error) {
	if p, err := exec.LookPath("helm"); err == nil {
		return p, nil
	}
	home, _ := os.UserHomeDir()
	tools := os.Getenv("MCP_EXECUTOR_TOOLS_DIR")
	if tools == "" {
		tools = filepath.Join(home, ".cache", "mcp-executor-tools")
	}
	for _, p := range []string{filepath.Join(tools, "bin", "helm"), filepath.Join(home, "go", "bin", "helm")} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("helm is not on PATH, in %s or in ~/go/bin: run ./scripts/test.sh setup in the repository's folder, which installs helm v3.22.0", filepath.Join(tools, "bin"))
}

// buildImages builds the static executor binary (CGO_ENABLED=0, as the Dockerfile's build stage does)
// and podtool, lays out a root folder, makes the image with mkimage.sh and imports it into the node.
func (c *cluster) buildImages() error {
	root := filepath.Join(c.images, "executor-root")
	bin := filepath.Join(root, "usr", "local", "bin")
	for _, d := range []string{bin, filepath.Join(root, "tmp"), filepath.Join(root, "etc")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	for pkg, out := range map[string]string{"./cmd/mcp-executor": "mcp-executor", "./deploy/cluster/podtool": "podtool"} {
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X main.version=cluster-test", "-o", filepath.Join(bin, out), pkg)
		cmd.Dir = "../.."
		if src := os.Getenv("REAL_CLUSTER_EXECUTOR_SRC"); src != "" && out == "mcp-executor" {
			cmd.Dir = src // the executor of another checkout, to try its fixes in a pod
		}
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("building %s: %w\n%s", pkg, err, b)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "etc", "passwd"), []byte("root:x:0:0:root:/:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/:/sbin/nologin\n"), 0o644); err != nil {
		return err
	}
	archive := filepath.Join(c.images, "executor.tar")
	if err := c.mkimage(executorImage, root, archive, "--entrypoint", `["/usr/local/bin/mcp-executor"]`, "--cmd", `["help"]`, "--user", "65532:65532"); err != nil {
		return err
	}
	return c.importImage(archive)
}

func (c *cluster) mkimage(name, root, out string, opts ...string) error {
	cmd := exec.Command(filepath.Join(c.tools, "mkimage.sh"), append([]string{name, root, out}, opts...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("mkimage.sh %s: %w\n%s", name, err, b)
	}
	return nil
}

func (c *cluster) importImage(archive string) error {
	cmd := exec.Command(filepath.Join(c.tools, "cluster.sh"), "import", archive)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("importing %s: %w\n%s", archive, err, b)
	}
	return nil
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// run runs a command with the cluster's kubeconfig and returns its standard output and error.
// kubectl is run as the cluster's own (REAL_CLUSTER_KUBECTL) when it names one.
func (c *cluster) run(ctx context.Context, stdin []byte, name string, args ...string) (string, string, error) {
	if name == "kubectl" {
		name = c.kubectlBin
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.kubeconfig)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

func (c *cluster) kubectl(ctx context.Context, args ...string) (string, string, error) {
	return c.run(ctx, nil, "kubectl", args...)
}

// mustKubectl runs kubectl and fails the test when it fails.
func (c *cluster) mustKubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, err := c.kubectl(ctxFor(t, 2*time.Minute), args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// release is one install of the chart in a namespace of its own.
type release struct {
	c        *cluster
	ns       string
	state    string // "emptyDir" or "pvc"
	env      *devsetup.Env
	stateDir string // the host folder behind the hostPath volume (pvc)
	values   map[string]any
}

// newRelease makes the namespace, the development keys and slip (internal/devsetup) with podtool as the
// tool server, the Secret of keys the chart's Role lets the executor read, and, for pvc, a hostPath
// PersistentVolume bound to the chart's claim (the cluster has no provisioner). It installs nothing yet.
func (c *cluster) newRelease(t *testing.T, ns, state string) *release {
	t.Helper()
	ctx := ctxFor(t, time.Minute)
	env, err := devsetup.Build(devsetup.Options{
		Dir: filepath.Join(t.TempDir(), "setup"), Command: "/usr/local/bin/podtool",
		Tools: map[string]devsetup.Tool{"echo": {Action: "test.echo"}, "sleep": {Action: "test.sleep"}, "alloc": {Action: "test.alloc"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ns = ns + "-" + strconv.FormatInt(time.Now().UnixMilli()%100000, 36) // a deleted namespace lingers while its pods stop
	r := &release{c: c, ns: ns, state: state, env: env}
	if _, err := c.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", ns, err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			r.dumpState(t)
			if os.Getenv("REAL_CLUSTER_KEEP") != "" {
				t.Logf("REAL_CLUSTER_KEEP is set: namespace %s is kept", ns)
				return
			}
		}
		_ = c.cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	data := map[string][]byte{}
	for key, path := range map[string]string{"agent": env.AgentKeys, "executor": env.ExecutorKeys, "copy": env.CopyKeyPath} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		data[key] = b
	}
	if _, err := c.cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "executor-keys"}, Data: data}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	slipText, err := os.ReadFile(env.SlipPath)
	if err != nil {
		t.Fatal(err)
	}
	r.values = map[string]any{
		"agent": map[string]any{"image": map[string]any{"repository": "busybox", "tag": "1.37", "pullPolicy": "Never"}},
		"executor": map[string]any{
			"image": map[string]any{"repository": strings.Split(executorImage, ":")[0], "tag": "test", "pullPolicy": "Never"},
			"settings": map[string]any{
				"name": "cluster test executor", "service": "executor",
				"server": map[string]any{"command": "/usr/local/bin/podtool", "args": []any{}},
				"agent": map[string]any{
					"slip": "/etc/mcp-executor/slip.json", "book": "/var/lib/mcp-executor/book.jsonl",
					"keys": "secret:" + ns + "/executor-keys#agent", "issuerKeys": []any{env.Thumbprint},
				},
				"executor": map[string]any{
					"keys": "secret:" + ns + "/executor-keys#executor", "copy": "/var/lib/mcp-executor/copy.jsonl",
					"copyKey": "secret:" + ns + "/executor-keys#copy",
				},
				"tools": map[string]any{
					"echo": map[string]any{"action": "test.echo"}, "sleep": map[string]any{"action": "test.sleep"},
					"alloc": map[string]any{"action": "test.alloc"},
				},
				"unlisted": "refuse",
			},
			"slip": string(slipText),
			// No kube-proxy on this node: the service IP of the API server does not route, so the
			// in-cluster client is pointed at the API server's own address (on this machine).
			"env": c.apiEnv(),
		},
		"keys":    map[string]any{"source": "secrets", "secrets": []any{"executor-keys"}},
		"state":   map[string]any{"type": state},
		"compare": map[string]any{"enabled": state == "pvc"},
	}
	if state == "pvc" {
		r.values["state"] = map[string]any{"type": "pvc", "storageClassName": testClass, "size": "64Mi"}
		r.makeHostPathVolume(t)
	}
	return r
}

func (c *cluster) apiEnv() []any {
	return []any{
		map[string]any{"name": "KUBERNETES_SERVICE_HOST", "value": c.apiHost},
		map[string]any{"name": "KUBERNETES_SERVICE_PORT", "value": c.apiPort},
	}
}

// makeHostPathVolume makes a folder owned by the executor's user and group and a PersistentVolume on
// it, reserved for the chart's claim.
func (r *release) makeHostPathVolume(t *testing.T) {
	t.Helper()
	r.stateDir = filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(r.stateDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(r.stateDir, 65532, 65532); err != nil {
		t.Fatal(err)
	}
	// t.TempDir's own folder is 0700: the kubelet mounts the leaf, so its parents need no access.
	pvName := r.ns + "-state"
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: pvName},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("64Mi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              testClass,
			ClaimRef:                      &corev1.ObjectReference{Namespace: r.ns, Name: fullname + "-state"},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{
				Path: r.stateDir, Type: new(corev1.HostPathDirectory)}},
		},
	}
	if _, err := r.c.cs.CoreV1().PersistentVolumes().Create(ctxFor(t, time.Minute), pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = r.c.cs.CoreV1().PersistentVolumes().Delete(context.Background(), pvName, metav1.DeleteOptions{})
	})
}

// set puts value at the dotted path of the release's values.
func (r *release) set(path string, value any) {
	m := r.values
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = value
}

func (r *release) valuesFile(t *testing.T) string {
	t.Helper()
	b, err := yaml.Marshal(r.values)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// helm runs helm against the release's namespace.
func (r *release) helm(t *testing.T, timeout time.Duration, args ...string) (string, error) {
	t.Helper()
	out, errOut, err := r.c.run(ctxFor(t, timeout+30*time.Second), nil, r.c.helm, append(args, "--namespace", r.ns)...)
	if err != nil {
		return out + errOut, fmt.Errorf("helm %s: %w", args[0], err)
	}
	return out + errOut, nil
}

// install installs the chart and waits until the Deployment is available (the executor's readiness
// probe passed).
func (r *release) install(t *testing.T) {
	t.Helper()
	out, err := r.helm(t, 3*time.Minute, "install", releaseName, chartDir, "-f", r.valuesFile(t), "--wait", "--timeout", "180s")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

// pod is the executor's pod: the Deployment's one pod that is not being deleted.
func (r *release) pod(t *testing.T) *corev1.Pod {
	t.Helper()
	var found *corev1.Pod
	r.eventually(t, time.Minute, "the release's pod", func() (bool, error) {
		list, err := r.c.cs.CoreV1().Pods(r.ns).List(context.Background(), metav1.ListOptions{
			LabelSelector: "app.kubernetes.io/instance=" + releaseName + ",!app.kubernetes.io/component"})
		if err != nil {
			return false, err
		}
		var live []corev1.Pod
		for _, p := range list.Items {
			if p.DeletionTimestamp == nil {
				live = append(live, p)
			}
		}
		if len(live) == 1 {
			found = &live[0]
			return true, nil
		}
		return false, nil
	})
	return found
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// eventually polls cond every 250 ms until it holds, failing the test after d.
func (r *release) eventually(t *testing.T, d time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	eventually(t, d, what, cond)
}

func eventually(t *testing.T, d time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(d)
	var last error
	for {
		ok, err := cond()
		if ok {
			return
		}
		if err != nil {
			last = err
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s; last error: %v", d, what, last)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// session opens an MCP session through `kubectl exec -i` into container, running argv there.
func (r *release) session(t *testing.T, pod, container string, argv ...string) (*mcp.ClientSession, *syncbuf.Buffer) {
	t.Helper()
	args := append([]string{"exec", "-i", "-n", r.ns, pod, "-c", container, "--"}, argv...)
	cmd := exec.Command(r.c.kubectlBin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+r.c.kubeconfig)
	var stderr syncbuf.Buffer // kubectl writes it while the test may read it
	cmd.Stderr = &stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "cluster-test", Version: "1"}, nil)
	s, err := client.Connect(ctxFor(t, time.Minute), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting through kubectl exec into %s/%s: %v\n%s", pod, container, err, stderr.String())
	}
	return s, &stderr
}

// callText calls a tool and returns its text, failing on a protocol error.
func callText(t *testing.T, ctx context.Context, s *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("calling %s: %v", tool, err)
	}
	return textOf(res), res.IsError
}

func callParams(tool string, args map[string]any) *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: tool, Arguments: args}
}

// textOf is the text of a tool result's content.
func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// logs is the executor container's log (previous: the one before the last restart).
func (r *release) logs(t *testing.T, pod string, previous bool) string {
	t.Helper()
	args := []string{"logs", "-n", r.ns, pod, "-c", "executor"}
	if previous {
		args = append(args, "--previous")
	}
	return r.c.mustKubectl(t, args...)
}

// dumpState logs what a failed test leaves: pods, events and the executor's log.
func (r *release) dumpState(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, args := range [][]string{
		{"get", "pods,pvc,jobs", "-n", r.ns, "-o", "wide"},
		{"get", "events", "-n", r.ns, "--sort-by=.lastTimestamp"},
		{"logs", "-n", r.ns, "-l", "app.kubernetes.io/instance=" + releaseName + ",!app.kubernetes.io/component", "-c", "executor", "--tail=40"},
	} {
		out, errOut, _ := r.c.kubectl(ctx, args...)
		t.Logf("kubectl %s:\n%s%s", strings.Join(args, " "), out, errOut)
	}
}

// notFound reports whether err is the API server's 404.
func notFound(err error) bool { return apierrors.IsNotFound(err) }

func writeFile(path, text string) error { return os.WriteFile(path, []byte(text), 0o600) }

// executorBinary is the static executor binary put into the image (it runs on this machine too).
func (c *cluster) executorBinary() string {
	return filepath.Join(c.images, "executor-root", "usr", "local", "bin", "mcp-executor")
}

func intOrString(port int) intstr.IntOrString { return intstr.FromInt32(int32(port)) }
