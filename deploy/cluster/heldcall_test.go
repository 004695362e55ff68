//go:build integration

package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// chartQueue is the approval queue folder of an executor whose settings name none: beside the copy, on
// the executor's own volume, since the settings' folder is a read-only mount. The chart writes it into
// the settings it renders; the executor takes the same folder by default.
const chartQueue = "/var/lib/mcp-executor/approvals"

// TestHeldCallThroughTheQueue installs the chart with one tool whose every call is held for a
// person's approval, and nothing else set for approvals. A call from outside the pod waits; its
// request is in the queue folder the chart chose; `mcp-executor approve`, run in the executor's
// container through kubectl exec as an operator would, lists it and approves it by its id; only then
// does the call reach the server, and its answer reaches the client. The executor warns of nothing
// (a queue folder that others could write would be warned of).
func TestHeldCallThroughTheQueue(t *testing.T) {
	r := kc.newRelease(t, "held", "emptyDir")
	r.set("executor.settings.tools.echo", map[string]any{"action": "test.echo", "approve": true})
	r.install(t)
	heldCallApproved(t, r)
}

// TestHeldCallWithExistingSecret: the settings come in executor.existingSecret, written by hand, with
// one tool held for approval and no approvals.queue, so the chart adds no queue of its own (it only
// fills in settings it renders). The settings' folder is the Secret's read-only mount; the executor's
// own default puts the queue beside its copy, on its volume: the pod starts and stays up (with the
// queue beside the settings it could not make the folder, and crash-looped), and a held call is
// approved from that folder as above.
func TestHeldCallWithExistingSecret(t *testing.T) {
	r := kc.newRelease(t, "held-secret", "emptyDir")
	ctx := ctxFor(t, time.Minute)
	executor := r.values["executor"].(map[string]any)
	settings := executor["settings"].(map[string]any)
	settings["tools"].(map[string]any)["echo"] = map[string]any{"action": "test.echo", "approve": true}
	settings["kubernetes"] = map[string]any{} // the secret: sources; the chart adds it only to settings it renders
	if _, ok := settings["approvals"]; ok {
		t.Fatalf("the settings name approvals: %v", settings["approvals"])
	}
	settingsJSON, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kc.cs.CoreV1().Secrets(r.ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "executor-settings"},
		Data: map[string][]byte{"executor.json": settingsJSON, "slip.json": []byte(executor["slip"].(string))}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	executor["existingSecret"] = "executor-settings"
	r.install(t)
	pod := heldCallApproved(t, r)
	got, err := kc.cs.CoreV1().Pods(r.ns).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range append(got.Status.InitContainerStatuses, got.Status.ContainerStatuses...) {
		if st.RestartCount != 0 {
			t.Errorf("container %s restarted %d times", st.Name, st.RestartCount)
		}
	}
}

// heldCallApproved calls the held tool echo through the bridge in the release's pod: the call waits,
// its request is in the chart's queue folder, `mcp-executor approve` in the executor's container
// approves it by id, and only then is it answered. The executor warns of nothing. It returns the pod.
func heldCallApproved(t *testing.T, r *release) *corev1.Pod {
	t.Helper()
	pod := r.pod(t)
	s, _ := r.session(t, pod.Name, "executor", "mcp-executor", "bridge", "--connect", socketAddr)
	defer s.Close()

	ctx := ctxFor(t, 3*time.Minute)
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := s.CallTool(ctx, callParams("echo", map[string]any{"text": "held"}))
		done <- answer{res, err}
	}()

	var id string
	r.eventually(t, time.Minute, "the held call's request in the queue", func() (bool, error) {
		out, err := approveInPod(ctx, r, pod.Name, "--json")
		if err != nil {
			return false, err
		}
		var list struct {
			Queue   string `json:"queue"`
			Waiting []struct {
				ID   string `json:"id"`
				Tool string `json:"tool"`
			} `json:"waiting"`
		}
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			return false, fmt.Errorf("approve --json printed %q: %w", out, err)
		}
		if list.Queue != chartQueue {
			t.Fatalf("approve reads the queue %q, want the chart's %q", list.Queue, chartQueue)
		}
		if len(list.Waiting) == 1 && list.Waiting[0].Tool == "echo" {
			id = list.Waiting[0].ID
			return true, nil
		}
		return false, fmt.Errorf("waiting: %+v", list.Waiting)
	})
	select {
	case a := <-done:
		t.Fatalf("the held call was answered before anyone approved it: %+v %v", a.res, a.err)
	default:
	}

	out, err := approveInPod(ctx, r, pod.Name, "--id", id, "--yes", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var given struct {
		ID       string `json:"id"`
		Approved bool   `json:"approved"`
	}
	if err := json.Unmarshal([]byte(out), &given); err != nil || given.ID != id || !given.Approved {
		t.Fatalf("approve --id %s --yes printed %q (%v)", id, out, err)
	}
	select {
	case a := <-done:
		if a.err != nil {
			t.Fatalf("the approved call: %v", a.err)
		}
		if text := textOf(a.res); a.res.IsError || text != "echo: held" {
			t.Fatalf("the approved call's answer: %q (isError %v)", text, a.res.IsError)
		}
	case <-time.After(time.Minute):
		t.Fatal("the approved call had no answer a minute after its approval")
	}

	for _, line := range strings.Split(r.logs(t, pod.Name, false), "\n") {
		if strings.Contains(line, `"level":"WARN"`) || strings.Contains(line, `"level":"ERROR"`) {
			t.Errorf("the executor warned: %s", line)
		}
	}
	return pod
}

// approveInPod runs `mcp-executor approve` with the pod's settings in the executor's container.
func approveInPod(ctx context.Context, r *release, pod string, args ...string) (string, error) {
	argv := append([]string{"exec", "-n", r.ns, pod, "-c", "executor", "--",
		"mcp-executor", "approve", "--config", "/etc/mcp-executor/executor.json"}, args...)
	out, errOut, err := r.c.kubectl(ctx, argv...)
	if err != nil {
		return "", fmt.Errorf("kubectl %s: %w\n%s%s", strings.Join(argv, " "), err, out, errOut)
	}
	return out, nil
}
