//go:build integration

package cluster

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed-6e06167c/mcp-executor/copylog"
)

const testExecutorName = "cluster test executor"

// copyLines reads the executor's copy from the host folder behind the hostPath volume, checking its tags.
func copyLines(t *testing.T, r *release) []copylog.Line {
	t.Helper()
	lines, err := copylog.ReadFile(filepath.Join(r.stateDir, "copy.jsonl"), r.env.CopyKey, testExecutorName)
	if err != nil {
		t.Fatalf("reading the executor's copy on the volume: %v", err)
	}
	return lines
}

// waitSent waits until the copy holds n sent lines: the calls are in flight at the server.
func waitSent(t *testing.T, r *release, n int) []copylog.Line {
	t.Helper()
	var sent []copylog.Line
	eventually(t, time.Minute, strconv.Itoa(n)+" sent lines in the copy", func() (bool, error) {
		sent = sent[:0]
		lines, err := copylog.ReadFile(filepath.Join(r.stateDir, "copy.jsonl"), r.env.CopyKey, testExecutorName)
		if err != nil {
			return false, err // a line being written; read again
		}
		for _, ln := range lines {
			if ln.Kind == copylog.KindSent {
				sent = append(sent, ln)
			}
		}
		return len(sent) >= n, nil
	})
	return sent
}

func countKind(lines []copylog.Line, k copylog.Kind, call string) int {
	n := 0
	for _, ln := range lines {
		if ln.Kind == k && (call == "" || ln.Call == call) {
			n++
		}
	}
	return n
}

// TestPodLifecycle runs the pod through what a cluster does to it: the agent's placeholder stops on
// SIGTERM; deleting the pod drains a call in flight into its real result and receipt; killing the
// executor's process makes the kubelet restart the native sidecar, whose start writes the late
// receipt of the call it lost; the compare Job reports OK, and fails loudly on a tampered book.
func TestPodLifecycle(t *testing.T) {
	r := kc.newRelease(t, "lifecycle", "pvc")
	r.install(t)
	pod := r.pod(t)

	t.Run("agent placeholder stops on SIGTERM", func(t *testing.T) {
		// The shell is PID 1 of its container: it gets a signal only when it traps it.
		// The exec's own process may die with the container before kubectl hears its exit (137): what
		// counts is how the container ended, read below.
		_, _, _ = kc.kubectl(ctxFor(t, time.Minute), "exec", "-n", r.ns, pod.Name, "-c", "agent", "--", "kill", "-TERM", "1")
		var st corev1.ContainerStatus
		r.eventually(t, time.Minute, "the agent container to restart", func() (bool, error) {
			p, err := kc.cs.CoreV1().Pods(r.ns).Get(context.Background(), pod.Name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			for _, c := range p.Status.ContainerStatuses {
				if c.Name == "agent" && c.RestartCount > 0 && c.LastTerminationState.Terminated != nil {
					st = c
					return true, nil
				}
			}
			return false, nil
		})
		if code := st.LastTerminationState.Terminated.ExitCode; code != 0 {
			t.Errorf("the agent's placeholder ended with %d on SIGTERM, want 0", code)
		}
	})

	t.Run("deleting the pod drains calls in flight", func(t *testing.T) {
		pod := r.pod(t)
		s, stderr := r.session(t, pod.Name, "executor", "mcp-executor", "bridge", "--connect", socketAddr)
		defer s.Close()
		before := countKind(copyLines(t, r), copylog.KindSent, "")
		type result struct {
			text  string
			isErr bool
			err   error
		}
		done := make(chan result, 1)
		ctx := ctxFor(t, 2*time.Minute)
		go func() {
			res, err := s.CallTool(ctx, callParams("sleep", map[string]any{"ms": 4000}))
			if err != nil {
				done <- result{err: err}
				return
			}
			done <- result{text: textOf(res), isErr: res.IsError}
		}()
		sent := waitSent(t, r, before+1)
		call := sent[len(sent)-1].Call
		kc.mustKubectl(t, "delete", "pod", "-n", r.ns, pod.Name, "--wait=false")
		res := <-done
		if res.err != nil || res.isErr || res.text != "slept 4000 ms" {
			t.Fatalf("the call in flight when the pod was deleted: %q (isError %v, %v); bridge: %s", res.text, res.isErr, res.err, stderr.String())
		}
		r.eventually(t, 2*time.Minute, "the deleted pod to be gone", func() (bool, error) {
			_, err := kc.cs.CoreV1().Pods(r.ns).Get(context.Background(), pod.Name, metav1.GetOptions{})
			return notFound(err), nil
		})
		lines := copyLines(t, r)
		if countKind(lines, copylog.KindReceipt, call) != 1 || countKind(lines, copylog.KindLateReceipt, call) != 0 {
			t.Errorf("the drained call %s: want one receipt line and no late receipt in the copy", call)
		}
	})

	t.Run("killing the executor restarts the native sidecar, which writes the late receipt", func(t *testing.T) {
		pod := r.pod(t)
		r.eventually(t, 2*time.Minute, "the new pod Ready", func() (bool, error) {
			p, err := kc.cs.CoreV1().Pods(r.ns).Get(context.Background(), pod.Name, metav1.GetOptions{})
			return err == nil && podReady(p), err
		})
		s, _ := r.session(t, pod.Name, "executor", "mcp-executor", "bridge", "--connect", socketAddr)
		defer s.Close()
		before := countKind(copyLines(t, r), copylog.KindSent, "")
		go func() {
			// The session dies with the executor: the call's answer never comes here.
			_, _ = s.CallTool(context.Background(), callParams("sleep", map[string]any{"ms": 30000}))
		}()
		sent := waitSent(t, r, before+1)
		call := sent[len(sent)-1].Call
		restarts := executorRestarts(t, r, pod.Name)
		pid := servePID(t, string(pod.UID))
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatalf("killing the executor (pid %d): %v", pid, err)
		}
		var st corev1.ContainerStatus
		r.eventually(t, 2*time.Minute, "the kubelet to restart the executor and the pod to be Ready", func() (bool, error) {
			p, err := kc.cs.CoreV1().Pods(r.ns).Get(context.Background(), pod.Name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			for _, c := range p.Status.InitContainerStatuses {
				if c.Name == "executor" && c.RestartCount > restarts && c.Ready {
					st = c
					return podReady(p), nil
				}
			}
			return false, nil
		})
		if term := st.LastTerminationState.Terminated; term == nil || term.ExitCode != 137 {
			t.Errorf("the executor's last termination: %+v, want exit 137 (SIGKILL)", term)
		}
		lines := copyLines(t, r)
		if countKind(lines, copylog.KindLateReceipt, call) != 1 {
			t.Fatalf("the call %s in flight when the executor was killed: no late receipt in the copy after the restart", call)
		}
		// That the late receipt's stub is in the book is what the compare Job below checks.
	})

	t.Run("compare Job reports OK, and fails loudly on a tampered book", func(t *testing.T) {
		job := runCompareJob(t, r, "compare-ok")
		if !job.ok || !strings.Contains(job.log, "compare: OK") {
			t.Fatalf("the compare Job on an untouched book: ok %v\n%s", job.ok, job.log)
		}
		// Take the last stub out of the book, as someone covering a call's tracks would.
		path := filepath.Join(r.stateDir, "book.jsonl")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
		if len(lines) < 3 {
			t.Fatalf("the book has %d lines, want a slip and stubs", len(lines))
		}
		tampered := strings.Join(lines[:len(lines)-1], "")
		if err := os.WriteFile(path, []byte(tampered), 0o600); err != nil {
			t.Fatal(err)
		}
		job = runCompareJob(t, r, "compare-tampered")
		if job.ok || job.exitCode == 0 {
			t.Fatalf("the compare Job on a tampered book succeeded:\n%s", job.log)
		}
		if !strings.Contains(job.log, "compare: FAIL") || !strings.Contains(job.log, "missing: call ") || !strings.Contains(job.log, "is not in the book") {
			t.Errorf("the failed compare Job's log names no missing receipt:\n%s", job.log)
		}
	})
}

type jobResult struct {
	ok       bool
	exitCode int32
	log      string
}

// runCompareJob runs the chart's compare CronJob once as a Job (kubectl create job --from) and waits
// for it to finish.
func runCompareJob(t *testing.T, r *release, name string) jobResult {
	t.Helper()
	kc.mustKubectl(t, "create", "job", "-n", r.ns, name, "--from=cronjob/"+fullname+"-compare")
	var job *batchv1.Job
	r.eventually(t, 2*time.Minute, "Job "+name+" to finish", func() (bool, error) {
		j, err := kc.cs.BatchV1().Jobs(r.ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		job = j
		return j.Status.Succeeded > 0 || j.Status.Failed > 0, nil
	})
	res := jobResult{ok: job.Status.Succeeded > 0}
	pods, err := kc.cs.CoreV1().Pods(r.ns).List(context.Background(), metav1.ListOptions{LabelSelector: "job-name=" + name})
	if err != nil || len(pods.Items) == 0 {
		t.Fatalf("the pod of Job %s: %v", name, err)
	}
	for _, c := range pods.Items[0].Status.ContainerStatuses {
		if c.State.Terminated != nil {
			res.exitCode = c.State.Terminated.ExitCode
		}
	}
	res.log = kc.mustKubectl(t, "logs", "-n", r.ns, "job/"+name)
	return res
}

// servePID finds, on this machine, the executor's `serve` process of the pod with the given UID (by
// its command line and its kubepods cgroup).
func servePID(t *testing.T, podUID string) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	alt := strings.ReplaceAll(podUID, "-", "_")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.HasPrefix(string(cmd), "/usr/local/bin/mcp-executor\x00serve\x00") {
			continue
		}
		cg, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cgroup"))
		if err == nil && (strings.Contains(string(cg), podUID) || strings.Contains(string(cg), alt)) {
			return pid
		}
	}
	t.Fatalf("no serve process of pod %s on this machine", podUID)
	return 0
}

// executorRestarts is the executor container's restart count.
func executorRestarts(t *testing.T, r *release, pod string) int32 {
	t.Helper()
	p, err := kc.cs.CoreV1().Pods(r.ns).Get(context.Background(), pod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Status.InitContainerStatuses {
		if c.Name == "executor" {
			return c.RestartCount
		}
	}
	t.Fatalf("pod %s has no executor container", pod)
	return 0
}
