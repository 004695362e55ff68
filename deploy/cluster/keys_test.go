//go:build integration

package cluster

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSecretOutsideTheRoleStopsTheStart: settings that name a Secret the chart's Role does not list
// (keys.secrets) never start: the executor's get is refused by the API server, it exits naming the
// Secret, and the pod never becomes Ready.
func TestSecretOutsideTheRoleStopsTheStart(t *testing.T) {
	r := kc.newRelease(t, "outside-role", "emptyDir")
	ctx := ctxFor(t, 3*time.Minute)
	keysSecret, err := kc.cs.CoreV1().Secrets(r.ns).Get(ctx, "executor-keys", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kc.cs.CoreV1().Secrets(r.ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "not-in-the-role"},
		Data: map[string][]byte{"copy": keysSecret.Data["copy"]}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r.set("executor.settings.executor.copyKey", "secret:"+r.ns+"/not-in-the-role#copy")
	if out, err := r.helm(t, time.Minute, "install", releaseName, chartDir, "-f", r.valuesFile(t)); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	pod := r.pod(t)
	var term *corev1.ContainerStateTerminated
	r.eventually(t, 2*time.Minute, "the executor to stop at its start", func() (bool, error) {
		p, err := kc.cs.CoreV1().Pods(r.ns).Get(context.Background(), pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if podReady(p) {
			t.Fatalf("the pod became Ready with a key in a Secret outside the Role")
		}
		for _, c := range p.Status.InitContainerStatuses {
			if c.Name != "executor" {
				continue
			}
			if c.State.Terminated != nil {
				term = c.State.Terminated
			} else if c.LastTerminationState.Terminated != nil {
				term = c.LastTerminationState.Terminated
			}
		}
		return term != nil, nil
	})
	if term.ExitCode != 1 {
		t.Errorf("the executor's exit: %d, want 1", term.ExitCode)
	}
	logs, errOut, err := kc.kubectl(ctx, "logs", "-n", r.ns, pod.Name, "-c", "executor", "--previous")
	if err != nil { // not restarted yet: the first run's log
		logs = kc.mustKubectl(t, "logs", "-n", r.ns, pod.Name, "-c", "executor")
	}
	if !strings.Contains(logs, "not-in-the-role") || !strings.Contains(strings.ToLower(logs), "forbidden") {
		t.Errorf("the executor's log does not say the Secret was forbidden:\n%s%s", logs, errOut)
	}
}

// TestKeysFromFiles: keys.source=files with the keys and settings in executor.existingSecret (the
// settings volume): the pod becomes Ready, and the executor does not warn that the group can read a
// secret file.
func TestKeysFromFiles(t *testing.T) {
	r := kc.newRelease(t, "files", "emptyDir")
	ctx := ctxFor(t, time.Minute)
	keysSecret, err := kc.cs.CoreV1().Secrets(r.ns).Get(ctx, "executor-keys", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	executor := r.values["executor"].(map[string]any)
	s := executor["settings"].(map[string]any)
	s["agent"].(map[string]any)["keys"] = "/etc/mcp-executor/agent.jwk"
	s["executor"].(map[string]any)["keys"] = "/etc/mcp-executor/executor.jwk"
	s["executor"].(map[string]any)["copyKey"] = "/etc/mcp-executor/copy.key"
	settingsJSON, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	slipText, err := os.ReadFile(r.env.SlipPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kc.cs.CoreV1().Secrets(r.ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "executor-files"},
		Data: map[string][]byte{"executor.json": settingsJSON, "slip.json": slipText, "agent.jwk": keysSecret.Data["agent"],
			"executor.jwk": keysSecret.Data["executor"], "copy.key": keysSecret.Data["copy"]}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	executor["existingSecret"] = "executor-files"
	r.values["keys"] = map[string]any{"source": "files"}
	r.install(t)
	pod := r.pod(t)
	logs := r.logs(t, pod.Name, false)
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, `"level":"WARN"`) || strings.Contains(line, `"level":"ERROR"`) {
			t.Errorf("the executor warned: %s", line)
		}
	}
	out, _, _ := kc.kubectl(ctx, "exec", "-n", r.ns, pod.Name, "-c", "executor", "--", "mcp-executor", "check", "--config", "/etc/mcp-executor/executor.json")
	if strings.Contains(out, "group") {
		t.Errorf("check in the running container warns about a group:\n%s", out)
	}
}
