//go:build integration

package keysintegration_test

import (
	"encoding/base64"
	"os"
	"strings"
	"testing"

	"github.com/hashicorp/vault/api"
	"github.com/seed-6e06167c/mcp-executor/internal/itest"
)

// vaultServer is the Vault dev server seen with its root token, and the
// policy this test's executor gets.
type vaultServer struct {
	addr   string
	root   *api.Client
	prefix string // KV folder and Transit key prefix the policy allows
	policy string
}

// newVault connects to the dev server, mounts KV v2 at secret/ and Transit
// at transit/ if they are not there, and writes the policy keys/README.md
// documents for fresh names.
func newVault(t testing.TB) *vaultServer {
	t.Helper()
	root := itest.VaultRoot(t)
	root.SetMaxRetries(0) // a refusal (Transit backup answers 500) or a server that is down is seen at once
	v := &vaultServer{addr: os.Getenv("VAULT_ADDR"), root: root, prefix: itest.Name("keysit-")}
	v.policy = itest.ExecutorPolicy(t, root, v.prefix)
	return v
}

// TestVaultSession: every key and the tool server's credential come from
// Vault. The agent's key set and the copy key are KV v2 fields, the
// executor's key set is split (its Ed25519 half a Transit key, its ML-DSA-87
// half a KV field), all made by `keys`; the credential is a KV field the
// operator wrote. The executor logs in with a token (from a file) or with
// Vault's Kubernetes auth (a service-account token the kube-apiserver
// issued, checked by Vault through TokenReview).
func TestVaultSession(t *testing.T) {
	for _, tc := range []struct {
		name  string
		says  string                                                      // what check says of the login
		login func(t *testing.T, v *vaultServer, s *setup) map[string]any // the settings' vault.auth
	}{
		{"token", "logged in by token auth", func(t *testing.T, v *vaultServer, s *setup) map[string]any {
			token := itest.VaultToken(t, v.root, v.policy)
			s.secret("Vault token", token)
			return map[string]any{"token": map[string]any{"file": s.writeFile(t, "vault-token", token)}}
		}},
		{"kubernetes auth", "logged in by kubernetes auth (mount keysit-kubernetes-", func(t *testing.T, v *vaultServer, s *setup) map[string]any {
			mount := kubernetesAuth(t, v)
			jwt := itest.KubeAdmin(t).ServiceAccountToken(t, mount.namespace, "mcp-executor", "vault")
			s.secret("service-account token", jwt)
			return map[string]any{"kubernetes": map[string]any{
				"role": "mcp-executor", "mount": mount.path, "tokenFile": s.writeFile(t, "sa-token", jwt),
			}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := newVault(t)
			s := newSetup(t)
			credential := itest.Name("keysit-vault-credential-")
			s.secret("tool server credential", credential)
			if _, err := v.root.KVv2("secret").Put(itest.Ctx(t), v.prefix+"/server", map[string]any{"token": credential}); err != nil {
				t.Fatal(err)
			}
			transitKey := v.prefix + "-executor"
			s.writeSettings(t, sources{
				agentKeys:    "vault:secret/" + v.prefix + "/agent#keys",
				executorKeys: map[string]any{"ed25519": "vault-transit:" + transitKey, "mldsa87": "vault:secret/" + v.prefix + "/executor#mldsa87"},
				copyKey:      "vault:secret/" + v.prefix + "/executor#copy",
				credential:   "vault:secret/" + v.prefix + "/server#token",
				blocks:       map[string]any{"vault": map[string]any{"address": v.addr, "auth": tc.login(t, v, s)}},
			})

			perm := s.permission(t)
			// What keys made is now in Vault, and in no output.
			s.secretKeySet(t, "agent key set", itest.KVField(t, v.root, "secret", v.prefix+"/agent", "keys"))
			s.secretKeySet(t, "executor ML-DSA-87 half", itest.KVField(t, v.root, "secret", v.prefix+"/executor", "mldsa87"))
			copyKey := itest.KVField(t, v.root, "secret", v.prefix+"/executor", "copy")
			s.secret("copy key", copyKey)
			transitStaysInVault(t, v, transitKey, perm)

			s.writeSlip(t, perm)
			code, out, errOut := s.run(t, "check", "--config", s.settings)
			if code != 0 || !strings.Contains(out, tc.says) || !strings.Contains(out, "signs in Vault Transit") {
				t.Errorf("check: exit %d, want 0 and %q\n%s\n%s", code, tc.says, out, errOut)
			}
			s.session(t, credential)
			s.verifyAndCompare(t)
			s.noSecretInOutputs(t)
		})
	}
}

// transitStaysInVault: the executor's Ed25519 key is a Transit key of type
// ed25519 that is not exportable: reading it gives its public key alone,
// which is the Ed25519 key keys printed for the permission, and Vault
// refuses to export it or to back it up, even to its root token.
func transitStaysInVault(t *testing.T, v *vaultServer, name string, perm map[string]any) {
	t.Helper()
	sec, err := v.root.Logical().ReadWithContext(itest.Ctx(t), "transit/keys/"+name)
	if err != nil || sec == nil {
		t.Fatalf("reading transit/keys/%s: %v", name, err)
	}
	if sec.Data["type"] != "ed25519" || sec.Data["exportable"] != false || sec.Data["allow_plaintext_backup"] != false {
		t.Errorf("Transit key %s: type %v, exportable %v, allow_plaintext_backup %v; want ed25519, false, false",
			name, sec.Data["type"], sec.Data["exportable"], sec.Data["allow_plaintext_backup"])
	}
	versions, _ := sec.Data["keys"].(map[string]any)
	if len(versions) != 1 {
		t.Fatalf("Transit key %s has %d versions, want 1", name, len(versions))
	}
	for ver, k := range versions {
		fields, _ := k.(map[string]any)
		// What reading a key version returns: public parts and names only.
		public := map[string]bool{"public_key": true, "hybrid_public_key": true, "name": true, "creation_time": true, "certificate_chain": true}
		for f := range fields {
			if !public[f] || strings.Contains(f, "private") {
				t.Errorf("Transit key %s version %s: reading it returns %q", name, ver, f)
			}
		}
		pub, err := base64.StdEncoding.DecodeString(fields["public_key"].(string))
		if err != nil || len(pub) != 32 {
			t.Fatalf("Transit key %s version %s: public key %v", name, ver, err)
		}
		if x := ed25519X(t, perm["with"]); x != base64.RawURLEncoding.EncodeToString(pub) {
			t.Errorf("the executor's Ed25519 key for the permission is not the Transit key's public key")
		}
	}
	if _, err := v.root.Logical().ReadWithContext(itest.Ctx(t), "transit/export/signing-key/"+name); err == nil || !strings.Contains(err.Error(), "not exportable") {
		t.Errorf("exporting the Transit key %s: %v, want a refusal (not exportable)", name, err)
	}
	if _, err := v.root.Logical().ReadWithContext(itest.Ctx(t), "transit/backup/"+name); err == nil {
		t.Errorf("Vault made a backup of the Transit key %s, which holds the private key", name)
	}
}

// ed25519X is the x of the Ed25519 JWK in a "with" entry.
func ed25519X(t *testing.T, with any) string {
	t.Helper()
	w, _ := with.(map[string]any)
	ks, _ := w["keys"].([]any)
	for _, k := range ks {
		if m, _ := k.(map[string]any); m["crv"] == "Ed25519" {
			x, _ := m["x"].(string)
			return x
		}
	}
	t.Fatalf("no Ed25519 key in with: %v", with)
	return ""
}

type kubeAuthMount struct{ path, namespace string }

// kubernetesAuth enables Vault's Kubernetes auth at a fresh mount, as
// keys/README.md says: the API server's address and CA, a reviewer token
// bound to system:auth-delegator, and a role binding the service account
// mcp-executor of a fresh namespace, audience "vault", to the test policy.
func kubernetesAuth(t *testing.T, v *vaultServer) kubeAuthMount {
	t.Helper()
	k := itest.KubeAdmin(t)
	m := kubeAuthMount{path: itest.Name("keysit-kubernetes-"), namespace: k.Namespace(t, "keysit-")}
	itest.KubernetesAuth(t, v.root, k, m.path, m.namespace)
	itest.VaultWrite(t, v.root, "auth/"+m.path+"/role/mcp-executor", map[string]any{
		"bound_service_account_names": "mcp-executor", "bound_service_account_namespaces": m.namespace,
		"audience": "vault", "token_policies": v.policy, "token_ttl": "1h", "token_max_ttl": "24h",
	})
	t.Cleanup(func() { _ = v.root.Sys().DisableAuth(m.path) })
	return m
}
