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
)

// chartQueue is the approval queue folder the chart gives the executor when its settings name none:
// on the executor's own volume, since the settings' folder is a read-only mount.
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
