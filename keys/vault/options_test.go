package vault

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/hashicorp/vault/api"
)

func TestNewAuthMethod(t *testing.T) {
	cases := []struct {
		name     string
		auth     Auth
		describe string
		wantErr  string
	}{
		{"kubernetes defaults", Auth{Kubernetes: &KubernetesAuth{Role: "mcp"}}, "kubernetes auth (mount kubernetes, role mcp, token file " + DefaultServiceAccountTokenFile + ")", ""},
		{"kubernetes own mount", Auth{Kubernetes: &KubernetesAuth{Role: "mcp", Mount: "k8s-a", TokenFile: "/t"}}, "kubernetes auth (mount k8s-a, role mcp, token file /t)", ""},
		{"token env", Auth{Token: &TokenAuth{}}, "token auth (VAULT_TOKEN)", ""},
		{"token file", Auth{Token: &TokenAuth{File: "/run/token"}}, "token auth (file /run/token)", ""},
		{"approle", Auth{AppRole: &AppRoleAuth{RoleIDFile: "/r", SecretIDFile: "/s"}}, "approle auth (mount approle, role id file /r)", ""},
		{"none", Auth{}, "", "exactly one"},
		{"two", Auth{Token: &TokenAuth{}, AppRole: &AppRoleAuth{RoleIDFile: "/r", SecretIDFile: "/s"}}, "", "exactly one"},
		{"kubernetes without role", Auth{Kubernetes: &KubernetesAuth{}}, "", "no role"},
		{"approle without secret id", Auth{AppRole: &AppRoleAuth{RoleIDFile: "/r"}}, "", "needs roleIdFile and secretIdFile"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := newAuthMethod(c.auth)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("newAuthMethod = %v, want error with %q", err, c.wantErr)
				}
				return
			}
			if err != nil || m.describe() != c.describe {
				t.Fatalf("newAuthMethod: %v, describe %q, want %q", err, m.describe(), c.describe)
			}
		})
	}
}

func TestNewTakesNoEnvironmentToken(t *testing.T) {
	t.Setenv("VAULT_TOKEN", "S3CRET-env-token")
	c, err := New(Options{Address: "http://127.0.0.1:1", Auth: Auth{AppRole: &AppRoleAuth{RoleIDFile: "/r", SecretIDFile: "/s"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.api.Token() != "" || c.lc.Token() != "" {
		t.Errorf("an approle client carries VAULT_TOKEN before logging in")
	}
	if st := c.Status(); st.LoggedIn || st.Address != "http://127.0.0.1:1" {
		t.Errorf("Status = %+v", st)
	}
}

func TestErrorText(t *testing.T) {
	base := Error{Address: "https://v:8200", Op: "reading KV secret", Path: "secret/data/mcp", Auth: "token auth (VAULT_TOKEN)"}
	cases := []struct {
		name      string
		status    int
		msgs      []string
		err       error
		want      string
		notExist  bool
		forbidden bool
	}{
		{"403", 403, []string{"permission denied"}, nil, "vault https://v:8200: reading KV secret secret/data/mcp with token auth (VAULT_TOKEN): permission denied (the token's policies do not allow this path, or the token was revoked or has expired): permission denied", false, true},
		{"404", 404, nil, nil, "vault https://v:8200: reading KV secret secret/data/mcp with token auth (VAULT_TOKEN): not found", true, false},
		{"500", 500, []string{"internal"}, nil, "vault https://v:8200: reading KV secret secret/data/mcp with token auth (VAULT_TOKEN): HTTP 500: internal", false, false},
		{"unreached", 0, nil, fmt.Errorf("dial tcp: connection refused"), "vault https://v:8200: reading KV secret secret/data/mcp with token auth (VAULT_TOKEN): dial tcp: connection refused", false, false},
	}
	for _, c := range cases {
		e := base
		e.Status, e.Messages, e.Err = c.status, c.msgs, c.err
		if e.Error() != c.want {
			t.Errorf("%s: %q\nwant %q", c.name, e.Error(), c.want)
		}
		if errors.Is(&e, fs.ErrNotExist) != c.notExist || errors.Is(&e, ErrPermissionDenied) != c.forbidden {
			t.Errorf("%s: errors.Is mismatched", c.name)
		}
	}
	if status(&api.ResponseError{StatusCode: 403}) != 403 || status(errors.New("x")) != 0 {
		t.Errorf("status() misreads errors")
	}
}
