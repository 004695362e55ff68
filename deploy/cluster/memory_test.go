//go:build integration

package cluster

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed-6e06167c/mcp-executor/copylog"
)

// TestMemoryLimitTooSmall: with a memory limit too small for the calls it gets, the executor is
// killed by the kernel's OOM killer and the pod says so (the container's last state: OOMKilled); the
// kubelet starts it again, and nothing written before is lost: the copy reads back intact with every
// receipt, and the compare Job reports OK.
func TestMemoryLimitTooSmall(t *testing.T) {
	r := kc.newRelease(t, "memory", "pvc")
	r.set("executor.resources", map[string]any{"requests": map[string]any{"cpu": "50m", "memory": "64Mi"}, "limits": map[string]any{"memory": "64Mi"}})
	r.install(t)
	pod := r.pod(t)
	s, _ := r.session(t, pod.Name, "executor", "mcp-executor", "bridge", "--connect", socketAddr)
	for _, text := range []string{"one", "two"} {
		if got, isErr := callText(t, ctxFor(t, time.Minute), s, "echo", map[string]any{"text": text}); isErr || got != "echo: "+text {
			t.Fatalf("echo %s: %q", text, got)
		}
	}
	restarts := executorRestarts(t, r, pod.Name)
	// One call whose arguments are 15 MiB: under the 16 MiB line cap, over what 64 MiB holds while
	// the executor reads, checks and records it.
	go func() {
		_, _ = s.CallTool(context.Background(), callParams("echo", map[string]any{"text": strings.Repeat("m", 15<<20)}))
	}()
	var term *corev1.ContainerStateTerminated
	r.eventually(t, 2*time.Minute, "the executor to be OOM-killed and started again", func() (bool, error) {
		p, err := kc.cs.CoreV1().Pods(r.ns).Get(context.Background(), pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range p.Status.InitContainerStatuses {
			if c.Name == "executor" && c.RestartCount > restarts && c.LastTerminationState.Terminated != nil {
				term = c.LastTerminationState.Terminated
				return c.Ready, nil
			}
		}
		return false, nil
	})
	if term.Reason != "OOMKilled" {
		t.Fatalf("the executor's last termination: %+v, want reason OOMKilled", term)
	}
	lines := copyLines(t, r)
	if n := countKind(lines, copylog.KindReceipt, ""); n != 2 {
		t.Errorf("the copy after the OOM kill holds %d receipts, want the 2 written before", n)
	}
	job := runCompareJob(t, r, "compare-after-oom")
	if !job.ok || !strings.Contains(job.log, "compare: OK") {
		t.Errorf("the compare Job after the OOM kill: ok %v\n%s", job.ok, job.log)
	}
}

// TestDefaultMemoryHoldsTheLargestCall: with the chart's default memory limit, a call with arguments
// just under the 16 MiB line cap goes through (the tool server echoes it back) without an OOM kill.
func TestDefaultMemoryHoldsTheLargestCall(t *testing.T) {
	r := kc.newRelease(t, "memory-default", "emptyDir")
	r.install(t)
	pod := r.pod(t)
	s, _ := r.session(t, pod.Name, "executor", "mcp-executor", "bridge", "--connect", socketAddr)
	defer s.Close()
	big := strings.Repeat("m", 15<<20)
	got, isErr := callText(t, ctxFor(t, 2*time.Minute), s, "echo", map[string]any{"text": big})
	if isErr || got != "echo: "+big {
		t.Errorf("the 15 MiB call: isError %v, %d bytes back", isErr, len(got))
	}
	if n := executorRestarts(t, r, pod.Name); n != 0 {
		p, _ := kc.cs.CoreV1().Pods(r.ns).Get(context.Background(), pod.Name, metav1.GetOptions{})
		t.Errorf("the executor restarted %d times: %+v", n, p.Status.InitContainerStatuses)
	}
}
