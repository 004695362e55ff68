package keys

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/seed-6e06167c/mcp-executor/keys/kube"
)

// ManifestNeeded is the error a secret: source gives for a value the
// executor made but does not write; see kube.ManifestNeeded.
type ManifestNeeded = kube.ManifestNeeded

var (
	dnsLabelRE     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
	dnsSubdomainRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	secretKeyRE    = regexp.MustCompile(`^[-._a-zA-Z0-9]{1,253}$`)
)

// secretSource is a key of a Kubernetes Secret:
// secret:<namespace>/<name>#<key>. Like a file, one trailing newline is
// dropped (kubectl create secret --from-file keeps the file's newline).
type secretSource struct {
	spec                 string
	namespace, name, key string
	k                    *kube.Client
}

func parseKubeSecret(spec, rest string, opts Options) (Source, error) {
	loc, key, ok := strings.Cut(rest, "#")
	ns, name, ok2 := strings.Cut(loc, "/")
	if !ok || !ok2 || !dnsLabelRE.MatchString(ns) || len(name) > 253 || !dnsSubdomainRE.MatchString(name) ||
		!secretKeyRE.MatchString(key) || key == "." || key == ".." {
		return nil, fmt.Errorf("source %q: want secret:<namespace>/<name>#<key> (Kubernetes names)", spec)
	}
	if opts.Kube == nil {
		return nil, fmt.Errorf("source %q: needs the kubernetes settings (in a pod, or a kubeconfig)", spec)
	}
	return &secretSource{spec: spec, namespace: ns, name: name, key: key, k: opts.Kube}, nil
}

func (s *secretSource) Name() string { return s.spec }
func (s *secretSource) Describe() string {
	return fmt.Sprintf("key %s of Kubernetes Secret %s/%s", s.key, s.namespace, s.name)
}

func (s *secretSource) Read(ctx context.Context) ([]byte, error) {
	b, err := s.k.SecretValue(ctx, s.namespace, s.name, s.key)
	if err != nil {
		return nil, err
	}
	if len(b) > MaxValueSize {
		return nil, fmt.Errorf("reading %s: larger than %d bytes", s.Describe(), MaxValueSize)
	}
	return dropNewline(b), nil
}

// Create writes nothing: it returns a *ManifestNeeded holding a manifest
// with the value for the user to apply.
func (s *secretSource) Create(ctx context.Context, value []byte) error {
	exists, err := s.k.SecretExists(ctx, s.namespace, s.name)
	if err != nil {
		return err
	}
	return &ManifestNeeded{
		Namespace: s.namespace, Name: s.name, Key: s.key, SecretExists: exists,
		Manifest: kube.SecretManifest(s.namespace, s.name, s.key, value),
	}
}
