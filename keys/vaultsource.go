package keys

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/seed-6e06167c/mcp-executor/keys/vault"
)

var (
	vaultSegmentRE = regexp.MustCompile(`^[A-Za-z0-9_.@=+-]+$`)
	vaultFieldRE   = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
)

// kvSource is a string field of a Vault KV version 2 secret:
// vault:<mount>/<path>#<field>, read at <mount>/data/<path>.
type kvSource struct {
	spec               string
	mount, path, field string
	v                  *vault.Client
}

func parseVaultKV(spec, rest string, opts Options) (Source, error) {
	loc, field, ok := strings.Cut(rest, "#")
	if !ok || !vaultFieldRE.MatchString(field) {
		return nil, fmt.Errorf("source %q: want vault:<kv-v2 mount>/<path>#<field>", spec)
	}
	mount, path, ok := strings.Cut(loc, "/")
	if !ok || !vaultPathOK(mount) || !vaultPathOK(path) {
		return nil, fmt.Errorf("source %q: want vault:<kv-v2 mount>/<path>#<field>, with a mount and a path of plain segments", spec)
	}
	if opts.Vault == nil {
		return nil, fmt.Errorf("source %q: needs the vault settings (address and auth)", spec)
	}
	return &kvSource{spec: spec, mount: mount, path: path, field: field, v: opts.Vault}, nil
}

func vaultPathOK(p string) bool {
	if p == "" {
		return false
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "." || seg == ".." || !vaultSegmentRE.MatchString(seg) {
			return false
		}
	}
	return true
}

func (s *kvSource) Name() string { return s.spec }
func (s *kvSource) Describe() string {
	return fmt.Sprintf("field %s of Vault KV v2 secret %s/data/%s at %s", s.field, s.mount, s.path, s.v.Address())
}

func (s *kvSource) Read(ctx context.Context) ([]byte, error) {
	b, err := s.v.ReadKVField(ctx, s.mount, s.path, s.field)
	if err != nil {
		return nil, err
	}
	if len(b) > MaxValueSize {
		return nil, fmt.Errorf("reading %s: larger than %d bytes", s.Describe(), MaxValueSize)
	}
	return b, nil
}

// Create adds the field to the secret (keeping its other fields).
func (s *kvSource) Create(ctx context.Context, value []byte) error {
	return s.v.CreateKVField(ctx, s.mount, s.path, s.field, value)
}

// transitSource is a Vault Transit key: vault-transit:[<mount>/]<key>. It
// has no value to read: it names the Ed25519 half of a key set.
type transitSource struct {
	spec        string
	mount, name string
	v           *vault.Client
}

func parseVaultTransit(spec, rest string, opts Options) (Source, error) {
	mount, name, ok := strings.Cut(rest, "/")
	if !ok {
		mount, name = "transit", rest
	}
	if !vaultPathOK(mount) || !vaultFieldRE.MatchString(name) {
		return nil, fmt.Errorf("source %q: want vault-transit:<key name> or vault-transit:<mount>/<key name>", spec)
	}
	if opts.Vault == nil {
		return nil, fmt.Errorf("source %q: needs the vault settings (address and auth)", spec)
	}
	return &transitSource{spec: spec, mount: mount, name: name, v: opts.Vault}, nil
}

func (s *transitSource) Name() string { return s.spec }
func (s *transitSource) Describe() string {
	return fmt.Sprintf("Vault Transit key %s/keys/%s at %s (Ed25519, signs in Vault)", s.mount, s.name, s.v.Address())
}

// Read refuses: the private key never leaves Vault.
func (s *transitSource) Read(ctx context.Context) ([]byte, error) {
	return nil, fmt.Errorf("%s: a Transit key signs inside Vault and has no value to read; use it as a key set's source", s.spec)
}
