package keys

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/seed-6e06167c/mcp-executor/keys/kube"
	"github.com/seed-6e06167c/mcp-executor/keys/vault"
)

// Source is one place a secret value lives. A missing value (a file that is
// not there, an unset variable, a KV field or Secret key that does not
// exist) is reported by an error for which errors.Is(err, fs.ErrNotExist)
// holds. Neither Name, Describe nor any error returned holds the value.
type Source interface {
	// Name is the spec as written in the settings, e.g. "env:AGENT_KEYS".
	Name() string
	// Describe says in words where the value lives, e.g. "file /etc/x (mode 0600)".
	Describe() string
	// Read returns the value.
	Read(ctx context.Context) ([]byte, error)
}

// Creator is a Source that can be given a value where none is yet. Create
// never replaces a value: when one is already there it returns an error for
// which errors.Is(err, fs.ErrExist) holds. A Kubernetes Secret source does
// not write: its Create returns a *ManifestNeeded error for the user to apply.
type Creator interface {
	Source
	Create(ctx context.Context, value []byte) error
}

// Options are what the sources need beyond their spec. The caller fills them
// from the settings; a nil client makes the sources that need it an error.
type Options struct {
	Vault  *vault.Client // for vault: and vault-transit: sources
	Kube   *kube.Client  // for secret: sources
	Logger *slog.Logger  // warnings (e.g. a group-readable key file); nil: slog.Default()
}

func (o Options) logger() *slog.Logger {
	if o.Logger != nil {
		return o.Logger
	}
	return slog.Default()
}

var (
	envNameRE  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	sourceKind = regexp.MustCompile(`^[a-z][a-z0-9-]*:`)
)

// ParseSource reads a source spec:
//
//	path/to/file                     a file, relative to baseDir unless absolute
//	file:path                        the same, for a path that itself holds a colon
//	env:NAME                         an environment variable
//	vault:<kv-v2 mount>/<path>#<field>   a field of a Vault KV version 2 secret
//	vault-transit:[<mount>/]<key>    a Vault Transit key (mount "transit" by default);
//	                                 it signs, it has no value to read
//	secret:<namespace>/<name>#<key>  a key of a Kubernetes Secret
//
// Any other "word:" prefix is refused, so that a mistyped kind is not taken
// for a file name. Nothing is reached while parsing.
func ParseSource(spec, baseDir string, opts Options) (Source, error) {
	if spec == "" {
		return nil, fmt.Errorf("source: empty")
	}
	if strings.ContainsAny(spec, "\x00\n\r") {
		return nil, fmt.Errorf("source %q: holds a control character", spec)
	}
	kind := sourceKind.FindString(spec)
	rest := strings.TrimPrefix(spec, kind)
	switch kind {
	case "":
		return newFileSource(spec, spec, baseDir, opts), nil
	case "file:":
		if rest == "" {
			return nil, fmt.Errorf("source %q: no file path after \"file:\"", spec)
		}
		return newFileSource(spec, rest, baseDir, opts), nil
	case "env:":
		if !envNameRE.MatchString(rest) {
			return nil, fmt.Errorf("source %q: %q is not an environment variable name", spec, rest)
		}
		return &envSource{spec: spec, name: rest}, nil
	case "vault:":
		return parseVaultKV(spec, rest, opts)
	case "vault-transit:":
		return parseVaultTransit(spec, rest, opts)
	case "secret:":
		return parseKubeSecret(spec, rest, opts)
	default:
		return nil, fmt.Errorf("source %q: unknown kind %q (want a file path, file:, env:, vault:, vault-transit: or secret:)", spec, strings.TrimSuffix(kind, ":"))
	}
}

// resolvePath joins a relative path to baseDir and cleans it.
func resolvePath(p, baseDir string) string {
	if filepath.IsAbs(p) || baseDir == "" {
		return filepath.Clean(p)
	}
	return filepath.Join(baseDir, p)
}
