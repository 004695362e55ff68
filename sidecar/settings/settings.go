package settings

import (
	"time"

	"github.com/seed-6e06167c/mcp-executor/sidecar/policy/quota"
	"github.com/seed-6e06167c/mcp-executor/sidecar/policy/redact"
)

// Settings is the executor's settings file, read and checked. Paths are
// absolute. Sources (see [Source]) are kept as written, file paths among them
// made absolute.
type Settings struct {
	File string // the settings file, absolute
	Dir  string // its folder, against which relative paths were read

	Name    string // the executor's name: 1–200 characters
	Service string // the id the slip's "with" gives the executor; default "executor"

	// Server is the one tool server of the single "server" form; zero
	// when the file names several in "servers" instead.
	Server Server
	// Servers are the tool servers of the "servers" form by name, nil for
	// the single form; ServerOrder their names in file order. Their tools
	// are named <server><NamespaceSeparator><tool>.
	Servers            map[string]Upstream
	ServerOrder        []string
	NamespaceSeparator string // "." (default) or "__"

	Agent    Agent
	Executor Executor

	// Tools holds the rules by pattern: an exact tool name or a glob
	// ("*", "?"; see package policy/glob for which rule decides a name).
	// ToolOrder the patterns as the file lists them.
	Tools     map[string]Tool
	ToolOrder []string

	Redaction redact.Options // the built-in detectors unless the file says otherwise

	ContentRules   string   // path of the content-rules file; "" for none
	Unlisted       Unlisted // what to do with a call to a tool no rule names
	HideUnlisted   bool     // tools/list without unlisted tools; default true
	Timeout        time.Duration
	DenialsPerHour int
	CallIDInMeta   bool // params._meta["red.prova/call-id"]; default true
	ShutdownWait   time.Duration
	MaxWaiting     int
	// MaxBytesWaiting bounds the bytes of the tool calls in flight (their
	// lines as the client sent them); a call past it gets 1001.
	MaxBytesWaiting int64
	// SignTimeout is how long one signature may take; SignTries how many
	// times a signature that failed or ran out of time is tried in all.
	SignTimeout time.Duration
	SignTries   int

	Vault      *Vault      // nil when the file has no vault block
	Kubernetes *Kubernetes // nil when the file has no kubernetes block

	Approvals Approvals // defaults when the file has no approvals block
}

// Defaults and ranges.
const (
	DefaultService        = "executor"
	DefaultTimeout        = 300000 * time.Millisecond
	MinTimeout            = 1000 * time.Millisecond
	MaxTimeout            = 86400000 * time.Millisecond
	DefaultDenialsPerHour = 600
	MaxDenialsPerHour     = 1000000
	DefaultShutdownWait   = 5000 * time.Millisecond
	MaxShutdownWait       = 600000 * time.Millisecond
	DefaultMaxWaiting     = 16
	MaxMaxWaiting         = 1000
	// 64 MiB: one call may be 16 MiB, and the executor holds a few copies of
	// a call while it is in flight; sized for the chart's 256Mi limit.
	DefaultMaxBytesWaiting = 64 << 20
	MinMaxBytesWaiting     = 1 << 20
	MaxMaxBytesWaiting     = 16 << 30
	DefaultSignTimeout     = 10000 * time.Millisecond
	MinSignTimeout         = 100 * time.Millisecond
	MaxSignTimeout         = 600000 * time.Millisecond
	DefaultSignTries       = 3
	MaxSignTries           = 10
	MaxFileSize            = 1 << 20
)

// DefaultPassEnv is the variables of the executor's environment the server
// sees when server.passEnv is not given.
var DefaultPassEnv = []string{"PATH", "PATHEXT", "SYSTEMROOT", "COMSPEC", "WINDIR", "TEMP", "TMP", "HOME", "USERPROFILE", "LANG", "LC_ALL", "TZ"}

// Unlisted is what the executor does with a call to a tool no rule names.
type Unlisted string

// The things the executor can do with a call to a tool no rule names.
const (
	UnlistedRefuse  Unlisted = "refuse"  // refuse with a denial (action executor.unlisted)
	UnlistedForward Unlisted = "forward" // send it on with no receipt and no denial
)

// Server is the tool server to start.
type Server struct {
	// Command is an absolute path, or a bare name to look up in Path (or,
	// when Path is empty, in the executor's own PATH, with a warning).
	Command string
	Args    []string
	Cwd     string   // absolute; default the settings file's folder
	Path    []string // absolute folders
	Env     []EnvVar // in file order
	PassEnv []string // default DefaultPassEnv
}

// EnvVar is one variable of the server's environment and where its value
// comes from: exactly one of Source (a [Source] string: file path made
// absolute, "env:NAME", "vault:…", "secret:…") and Value (written in the
// settings themselves; IsValue tells an empty value apart).
type EnvVar struct {
	Name    string
	Source  string
	Value   string
	IsValue bool
}

// Agent is the agent's slip, book and keys.
type Agent struct {
	Slip       string // absolute
	Book       string // absolute
	Keys       KeySource
	IssuerKeys []string // passkey thumbprints; nil when not given (not compared, with a warning)
}

// Executor is the executor's own keys and copy.
type Executor struct {
	Keys    KeySource
	Copy    string // absolute
	CopyKey string // a Source string (not vault-transit)
}

// KeySource says where a key set comes from: either one Source for the whole
// set (Whole), or one per half (Ed25519 and MLDSA87), which is how a
// Vault-Transit Ed25519 key ("vault-transit:<key>") is paired with an
// ML-DSA-87 seed read from a secret.
type KeySource struct {
	Whole   string
	Ed25519 string
	MLDSA87 string
}

// Tool is the rule for one tool name or glob.
type Tool struct {
	Action string  // "" only where Refuse is set and the file gives none
	Amount *Amount // nil when the action has no amount
	// Refuse says calls are refused with a denial, as for an unlisted tool.
	Refuse bool
	// Quota is nil when the rule sets none. A glob rule's quota counts
	// each tool name it decides apart.
	Quota *quota.Limits
	// Approve is nil unless every call is held for a person's approval.
	Approve *Approve
}

// AmountKind is how a tool call's amount is found.
type AmountKind string

// The ways a tool call's amount is found.
const (
	AmountFixed   AmountKind = "value"   // Value
	AmountPointer AmountKind = "pointer" // the whole number at Pointer in the arguments
	AmountCount   AmountKind = "count"   // the length of the list at Pointer
)

// Amount is a tool's amount rule.
type Amount struct {
	Unit    string
	Kind    AmountKind
	Value   int64  // AmountFixed
	Pointer string // AmountPointer, AmountCount: RFC 6901
}

// Vault is how to reach and log in to Vault.
type Vault struct {
	Address   string // "" means VAULT_ADDR
	CAFile    string // absolute; "" for none
	Namespace string
	Auth      VaultAuth
}

// VaultAuth is exactly one way of logging in.
type VaultAuth struct {
	Kubernetes *VaultKubernetes
	Token      *VaultToken
	AppRole    *VaultAppRole
}

// DefaultServiceAccountToken is where Kubernetes projects a pod's token.
const DefaultServiceAccountToken = "/var/run/secrets/kubernetes.io/serviceaccount/token"

// VaultKubernetes logs in with the pod's service-account token.
type VaultKubernetes struct {
	Role      string
	Mount     string // default "kubernetes"
	TokenFile string // default DefaultServiceAccountToken
}

// VaultToken logs in with a token read from File ("" means VAULT_TOKEN).
type VaultToken struct {
	File string
}

// VaultAppRole logs in with an AppRole role id and secret id read from files.
type VaultAppRole struct {
	RoleIDFile   string
	SecretIDFile string
	Mount        string // default "approle"
}

// Kubernetes is how to reach the Kubernetes API for secret: sources.
type Kubernetes struct {
	Kubeconfig string // absolute; "" means in-cluster
}

// Warning is something allowed but unwise in the settings.
type Warning struct {
	Place   string
	Message string
}

func (w Warning) String() string {
	if w.Place == "" {
		return w.Message
	}
	return w.Place + ": " + w.Message
}

// Error is a fault in the settings file.
type Error struct {
	File   string
	Place  string // "" for the file as a whole
	Reason string
}

func (e *Error) Error() string {
	s := "settings " + e.File + ": "
	if e.Place != "" {
		s += e.Place + ": "
	}
	return s + e.Reason
}

// ToolNames returns the names of the tools with a rule, in file order.
func (s *Settings) ToolNames() []string { return append([]string(nil), s.ToolOrder...) }
