package vault

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"time"

	"github.com/hashicorp/vault/api"
)

// grant is what a login gives: a token and its lifetime.
type grant struct {
	token     string
	ttl       time.Duration // what is left; 0: does not expire
	period    time.Duration // the lifetime to ask for when renewing; 0: ttl
	renewable bool
}

// authMethod is one way of logging in.
type authMethod interface {
	// describe names the method and its public parameters, never a secret.
	describe() string
	// name is the method's short name: "kubernetes", "token" or "approle".
	name() string
	// login gets a token. lc carries no token; tc is the client that will
	// carry the token (token auth sets it there to look it up).
	login(ctx context.Context, lc, tc *api.Client) (grant, error)
}

func newAuthMethod(a Auth) (authMethod, error) {
	n := 0
	var m authMethod
	if a.Kubernetes != nil {
		n++
		k := *a.Kubernetes
		if k.Role == "" {
			return nil, fmt.Errorf("vault kubernetes auth: no role")
		}
		if k.Mount == "" {
			k.Mount = "kubernetes"
		}
		if k.TokenFile == "" {
			k.TokenFile = DefaultServiceAccountTokenFile
		}
		m = kubernetesLogin(k)
	}
	if a.Token != nil {
		n++
		m = tokenLogin(*a.Token)
	}
	if a.AppRole != nil {
		n++
		r := *a.AppRole
		if r.RoleIDFile == "" || r.SecretIDFile == "" {
			return nil, fmt.Errorf("vault approle auth: needs roleIdFile and secretIdFile")
		}
		if r.Mount == "" {
			r.Mount = "approle"
		}
		m = appRoleLogin(r)
	}
	if n != 1 {
		return nil, fmt.Errorf("vault auth: exactly one of kubernetes, token and appRole must be set (found %d)", n)
	}
	return m, nil
}

// readSecretFile reads a token or id from a file, one trailing newline and
// surrounding spaces dropped. Errors name the file, never its content.
func readSecretFile(what, path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading the %s: %w", what, err)
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return "", fmt.Errorf("reading the %s: %s is empty", what, path)
	}
	return string(b), nil
}

func grantOf(s *api.Secret) (grant, error) {
	if s == nil || s.Auth == nil || s.Auth.ClientToken == "" {
		return grant{}, fmt.Errorf("the login answer holds no token")
	}
	return grant{
		token:     s.Auth.ClientToken,
		ttl:       time.Duration(s.Auth.LeaseDuration) * time.Second,
		renewable: s.Auth.Renewable,
	}, nil
}

type kubernetesLogin KubernetesAuth

func (k kubernetesLogin) name() string { return "kubernetes" }
func (k kubernetesLogin) describe() string {
	return fmt.Sprintf("kubernetes auth (mount %s, role %s, token file %s)", k.Mount, k.Role, k.TokenFile)
}

func (k kubernetesLogin) login(ctx context.Context, lc, _ *api.Client) (grant, error) {
	jwt, err := readSecretFile("service-account token", k.TokenFile)
	if err != nil {
		return grant{}, err
	}
	s, err := lc.Logical().WriteWithContext(ctx, "auth/"+k.Mount+"/login", map[string]any{"role": k.Role, "jwt": jwt})
	if err != nil {
		return grant{}, err
	}
	return grantOf(s)
}

type appRoleLogin AppRoleAuth

func (r appRoleLogin) name() string { return "approle" }
func (r appRoleLogin) describe() string {
	return fmt.Sprintf("approle auth (mount %s, role id file %s)", r.Mount, r.RoleIDFile)
}

func (r appRoleLogin) login(ctx context.Context, lc, _ *api.Client) (grant, error) {
	roleID, err := readSecretFile("approle role id", r.RoleIDFile)
	if err != nil {
		return grant{}, err
	}
	secretID, err := readSecretFile("approle secret id", r.SecretIDFile)
	if err != nil {
		return grant{}, err
	}
	s, err := lc.Logical().WriteWithContext(ctx, "auth/"+r.Mount+"/login", map[string]any{"role_id": roleID, "secret_id": secretID})
	if err != nil {
		return grant{}, err
	}
	return grantOf(s)
}

type tokenLogin TokenAuth

func (t tokenLogin) name() string { return "token" }
func (t tokenLogin) describe() string {
	if t.File == "" {
		return "token auth (VAULT_TOKEN)"
	}
	return "token auth (file " + t.File + ")"
}

// login takes the token as given and asks Vault about it (lookup-self), so
// that a bad token is found at start and its lifetime is known.
func (t tokenLogin) login(ctx context.Context, _, tc *api.Client) (grant, error) {
	var tok string
	if t.File == "" {
		tok = os.Getenv(api.EnvVaultToken)
		if tok == "" {
			return grant{}, fmt.Errorf("VAULT_TOKEN is not set")
		}
	} else {
		var err error
		if tok, err = readSecretFile("vault token", t.File); err != nil {
			return grant{}, err
		}
	}
	tc.SetToken(tok)
	s, err := tc.Auth().Token().LookupSelfWithContext(ctx)
	if err != nil {
		return grant{}, err
	}
	ttl, err := s.TokenTTL()
	if err != nil {
		return grant{}, fmt.Errorf("reading the token's ttl: %w", err)
	}
	renewable, err := s.TokenIsRenewable()
	if err != nil {
		return grant{}, fmt.Errorf("reading whether the token is renewable: %w", err)
	}
	g := grant{token: tok, ttl: ttl, renewable: renewable}
	if n, err := number(s.Data["creation_ttl"]); err == nil && n > 0 {
		g.period = time.Duration(n) * time.Second
	}
	return g, nil
}
