//go:build integration

package keysintegration_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/internal/itest"
	"github.com/seed-6e06167c/mcp-executor/keys"
)

const (
	keysSecret       = "mcp-executor-keys"       // the key sets and the copy key
	credentialSecret = "mcp-executor-credential" // the tool server's credential
	outsideSecret    = "someone-elses-secret"    // a Secret the Role does not name
)

// secretsSetup keeps every key and the credential in Kubernetes Secrets of
// a fresh namespace: the agent's and the executor's key sets and the copy
// key in keysSecret, the credential in the Secret credentialFrom names. The
// executor reads them with a kubeconfig whose service-account token has a
// Role allowing get on keysSecret and credentialSecret alone. It returns
// the setup, the credential's value and the namespace.
func secretsSetup(t *testing.T, credentialFrom string) (s *setup, credential, ns string) {
	t.Helper()
	k := itest.KubeAdmin(t)
	ns = k.Namespace(t, "keysit-")
	s = newSetup(t)
	agent, executor, copyKey := keys.NewSeeds(), keys.NewSeeds(), keys.NewCopyKey()
	credential = itest.Name("keysit-secret-credential-")
	k.Secret(t, ns, keysSecret, map[string]string{
		"agent": string(agent.Marshal()), "executor": string(executor.Marshal()), "copy": string(copyKey),
	})
	k.Secret(t, ns, credentialSecret, map[string]string{"token": credential})
	outside := itest.Name("keysit-outside-value-")
	k.Secret(t, ns, outsideSecret, map[string]string{"token": outside})
	k.GrantGetSecrets(t, ns, "mcp-executor", keysSecret, credentialSecret)
	jwt := k.ServiceAccountToken(t, ns, "mcp-executor")
	kubeconfig := k.Kubeconfig(t, s.dir, jwt)

	s.secretKeySet(t, "agent key set", string(agent.Marshal()))
	s.secretKeySet(t, "executor key set", string(executor.Marshal()))
	s.secret("copy key", string(copyKey))
	s.secret("tool server credential", credential)
	s.secret("value of the Secret outside the Role", outside)
	s.secret("service-account token", jwt)

	s.writeSettings(t, sources{
		agentKeys:    "secret:" + ns + "/" + keysSecret + "#agent",
		executorKeys: "secret:" + ns + "/" + keysSecret + "#executor",
		copyKey:      "secret:" + ns + "/" + keysSecret + "#copy",
		credential:   "secret:" + ns + "/" + credentialFrom + "#token",
		blocks:       map[string]any{"kubernetes": map[string]any{"kubeconfig": kubeconfig}},
	})
	return s, credential, ns
}

// TestSecretsSession: the same session with every key and the credential
// read from Kubernetes Secrets, with get on those Secrets alone.
func TestSecretsSession(t *testing.T) {
	t.Parallel()
	s, credential, _ := secretsSetup(t, credentialSecret)
	s.writeSlip(t, s.permission(t))
	code, out, errOut := s.run(t, "check", "--config", s.settings)
	if code != 0 || !strings.Contains(out, "reached by kubeconfig") {
		t.Errorf("check: exit %d, want 0 and the Secrets reached by kubeconfig\n%s\n%s", code, out, errOut)
	}
	s.session(t, credential)
	s.verifyAndCompare(t)
	s.noSecretInOutputs(t)
}

// TestSecretOutsideRole: when the credential names a Secret the Role does
// not allow, the executor does not start, and says which Secret was refused
// and that the Role must allow get on it, with no secret value in its
// output.
func TestSecretOutsideRole(t *testing.T) {
	t.Parallel()
	s, _, ns := secretsSetup(t, outsideSecret)
	s.writeSlip(t, s.permission(t))
	code, out, errOut := s.run(t, "stdio", "--config", s.settings)
	if code == 0 {
		t.Fatalf("stdio started with a credential in a Secret outside the Role\nstdout:\n%s\nstderr:\n%s", out, errOut)
	}
	if out != "" {
		t.Errorf("stdout holds %q, want nothing (no MCP session)", out)
	}
	for _, want := range []string{
		"Secret " + ns + "/" + outsideSecret,
		"get refused",
		"Role granting get on resourceNames [" + outsideSecret + "] in namespace " + ns,
		credentialVar,
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	// The credential is read before anything is written: the failed start leaves no book and no copy.
	for _, name := range []string{"book.jsonl", "copy.jsonl"} {
		if _, err := os.Stat(filepath.Join(s.dir, name)); err == nil {
			t.Errorf("the failed start left %s behind", name)
		}
	}
	s.noSecretInOutputs(t)
}
