//go:build integration

package cluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const vaultImage = "localhost/vault:test"

var (
	vaultImageOnce sync.Once
	vaultImageErr  error
)

// buildVaultImage makes an image of the vault binary scripts/testenv/vault.sh builds (VAULT_BIN, else
// its cache path). That binary is linked against the C library, so the libraries ldd names go in beside
// it; busybox gives the shell deploy/vault/setup.sh runs in.
func (c *cluster) buildVaultImage() error {
	vaultImageOnce.Do(func() {
		bin := os.Getenv("VAULT_BIN")
		if bin == "" {
			home, _ := os.UserHomeDir()
			bin = filepath.Join(home, ".cache", "mcp-executor-tools", "vault-v1.21.0", "vault")
		}
		if _, err := os.Stat(bin); err != nil {
			vaultImageErr = fmt.Errorf("the vault binary (%w): build it with ./scripts/testenv/servers.sh build vault, in the repository's folder", err)
			return
		}
		root := filepath.Join(c.images, "vault-root")
		for _, d := range []string{"bin", "tmp", "etc", "setup"} {
			if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
				vaultImageErr = err
				return
			}
		}
		if err := os.Chmod(filepath.Join(root, "tmp"), 0o1777); err != nil {
			vaultImageErr = err
			return
		}
		copies := map[string]string{bin: "bin/vault", "/bin/busybox": "bin/busybox",
			"../vault/setup.sh": "setup/setup.sh", "../vault/policy.hcl": "setup/policy.hcl"}
		out, err := exec.Command("ldd", bin).Output()
		if err != nil {
			vaultImageErr = fmt.Errorf("ldd %s: %w", bin, err)
			return
		}
		for _, lib := range regexp.MustCompile(`(/[^\s]+\.so[^\s]*)`).FindAllString(string(out), -1) {
			copies[lib] = strings.TrimPrefix(lib, "/")
		}
		for from, to := range copies {
			dst := filepath.Join(root, to)
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				vaultImageErr = err
				return
			}
			if b, err := exec.Command("cp", "-L", from, dst).CombinedOutput(); err != nil {
				vaultImageErr = fmt.Errorf("copying %s: %w %s", from, err, b)
				return
			}
		}
		for _, applet := range []string{"sh", "env", "cat"} {
			if err := os.Symlink("busybox", filepath.Join(root, "bin", applet)); err != nil {
				vaultImageErr = err
				return
			}
		}
		if err := os.WriteFile(filepath.Join(root, "etc", "passwd"), []byte("root:x:0:0:root:/tmp:/bin/sh\n"), 0o644); err != nil {
			vaultImageErr = err
			return
		}
		archive := filepath.Join(c.images, "vault.tar")
		if vaultImageErr = c.mkimage(vaultImage, root, archive, "--entrypoint", `["/bin/vault"]`); vaultImageErr != nil {
			return
		}
		vaultImageErr = c.importImage(archive)
		os.Remove(archive)
	})
	return vaultImageErr
}

// TestKeysFromVaultInCluster: Vault runs as a pod (a dev server on the node's address, as the API
// server is), set up by deploy/vault/setup.sh run in it, reviewing tokens with its own service account;
// the executor logs in with Kubernetes auth using its projected token (audience vault) and reads every
// key from KV: the pod becomes Ready and serves a call. With approvals.kubernetes on, the Vault login
// uses the second projected token (audience vault) and the first stays the API server's.
func TestKeysFromVaultInCluster(t *testing.T) {
	if err := kc.buildVaultImage(); err != nil {
		t.Fatal(err)
	}
	r := kc.newRelease(t, "vault", "emptyDir")
	ctx := ctxFor(t, 4*time.Minute)
	addr := "http://" + kc.apiHost + ":18200"

	// Vault's own account reviews the executor's tokens (system:auth-delegator).
	if _, err := kc.cs.CoreV1().ServiceAccounts(r.ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "vault"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: r.ns + "-vault-token-review"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "system:auth-delegator"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "vault", Namespace: r.ns}},
	}
	if _, err := kc.cs.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kc.cs.RbacV1().ClusterRoleBindings().Delete(context.Background(), crb.Name, metav1.DeleteOptions{})
	})
	vault := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "vault"},
		Spec: corev1.PodSpec{
			ServiceAccountName: "vault",
			// On the node's network, listening on the node's bridge address only: the executor reaches it
			// as it reaches the API server, and nothing outside this machine can.
			HostNetwork: true,
			Containers: []corev1.Container{{
				Name: "vault", Image: vaultImage, ImagePullPolicy: corev1.PullNever,
				Args: []string{"server", "-dev", "-dev-root-token-id=root", "-dev-listen-address=" + kc.apiHost + ":18200"},
				Env: []corev1.EnvVar{{Name: "HOME", Value: "/tmp"}, {Name: "SKIP_SETCAP", Value: "1"},
					{Name: "VAULT_ADDR", Value: addr}, {Name: "VAULT_TOKEN", Value: "root"}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
					Path: "/v1/sys/health", Port: intOrString(18200)}}, PeriodSeconds: 1},
			}},
		},
	}
	if _, err := kc.cs.CoreV1().Pods(r.ns).Create(ctx, vault, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r.eventually(t, 2*time.Minute, "the Vault pod Ready", func() (bool, error) {
		p, err := kc.cs.CoreV1().Pods(r.ns).Get(context.Background(), "vault", metav1.GetOptions{})
		return err == nil && podReady(p), err
	})
	vaultExec := func(stdin []byte, args ...string) string {
		t.Helper()
		out, errOut, err := kc.run(ctx, stdin, "kubectl", append([]string{"exec", "-i", "-n", r.ns, "vault", "--"}, args...)...)
		if err != nil {
			t.Fatalf("in the Vault pod, %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
		}
		return out + errOut
	}
	// The project's own set-up script, for the chart's defaults.
	vaultExec(nil, "env", "NAMESPACE="+r.ns, "SERVICE_ACCOUNT="+fullname, "KUBERNETES_HOST="+kc.cfg.Host, "sh", "/setup/setup.sh")
	for path, file := range map[string]string{"agent keyset": r.env.AgentKeys, "executor keyset": r.env.ExecutorKeys, "copy key": r.env.CopyKeyPath} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		name, field, _ := strings.Cut(path, " ")
		vaultExec([]byte(strings.TrimSuffix(string(b), "\n")), "vault", "kv", "put", "secret/mcp-executor/"+name, field+"=-")
	}

	r.values["keys"] = map[string]any{"source": "vault", "vault": map[string]any{"address": addr, "role": "mcp-executor", "authMount": "kubernetes", "audience": "vault"}}
	executor := r.values["executor"].(map[string]any)
	s := executor["settings"].(map[string]any)
	s["agent"].(map[string]any)["keys"] = "vault:secret/mcp-executor/agent#keyset"
	s["executor"].(map[string]any)["keys"] = "vault:secret/mcp-executor/executor#keyset"
	s["executor"].(map[string]any)["copyKey"] = "vault:secret/mcp-executor/copy#key"
	// With ApprovalRequests too, the pod holds two tokens: the API server's and Vault's (vault-token),
	// which the settings' Vault login reads.
	r.set("approvals.kubernetes.enabled", true)
	r.install(t)
	pod := r.pod(t)
	sess, _ := r.session(t, pod.Name, "executor", "mcp-executor", "bridge", "--connect", socketAddr)
	defer sess.Close()
	if text, isErr := callText(t, ctx, sess, "echo", map[string]any{"text": "keys from vault"}); isErr || text != "echo: keys from vault" {
		t.Errorf("echo with keys from Vault: %q (isError %v)", text, isErr)
	}
	logs := r.logs(t, pod.Name, false)
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, `"level":"WARN"`) || strings.Contains(line, `"level":"ERROR"`) {
			t.Errorf("the executor warned: %s", line)
		}
	}
	out, err := r.helm(t, 2*time.Minute, "test", releaseName, "--logs", "--timeout", "120s")
	if err != nil || !strings.Contains(out, "check: all well") || !strings.Contains(strings.ToLower(out), "kubernetes") {
		t.Errorf("helm test with keys in Vault: %v\n%s", err, out)
	}
}
