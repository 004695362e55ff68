package vault

import "log/slog"

// Options are the settings' vault block. The caller resolves relative file
// paths. Exactly one of the Auth members must be set.
type Options struct {
	Address   string // e.g. "https://vault.example:8200"; "" takes VAULT_ADDR
	CAFile    string // PEM bundle that signs the server's certificate; "" = system roots (or VAULT_CACERT)
	Namespace string // Vault Enterprise namespace; "" = none
	Auth      Auth
	Logger    *slog.Logger // renewal and re-login notes; nil: slog.Default()
}

// Auth is how the executor logs in to Vault: one member is set.
type Auth struct {
	Kubernetes *KubernetesAuth
	Token      *TokenAuth
	AppRole    *AppRoleAuth
}

// KubernetesAuth logs in with the pod's projected service-account token.
type KubernetesAuth struct {
	Role      string // the Vault role (auth/<mount>/role/<role>)
	Mount     string // "" = "kubernetes"
	TokenFile string // "" = DefaultServiceAccountTokenFile; read again at every login (it rotates)
}

// TokenAuth uses a Vault token given to the executor.
type TokenAuth struct {
	File string // "" = the VAULT_TOKEN environment variable; read again at every re-login
}

// AppRoleAuth logs in with a role id and a secret id, each from a file.
type AppRoleAuth struct {
	RoleIDFile   string
	SecretIDFile string
	Mount        string // "" = "approle"
}

// DefaultServiceAccountTokenFile is where Kubernetes mounts a pod's token.
const DefaultServiceAccountTokenFile = "/var/run/secrets/kubernetes.io/serviceaccount/token"
