package boot

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/seed-6e06167c/mcp-executor/keys"
)

// ReadSecrets reads the value of each source by name: a stdio tool
// server's credentials (its environment) and an HTTP tool server's headers,
// as a start reads them and as check reads them one at a time
// ([ReadSecret]). The names were checked when the settings were read (a
// variable's name, a header's name): a header's name is no variable's.
func ReadSecrets(ctx context.Context, sources map[string]string, baseDir string, opts keys.Options) (map[string]string, error) {
	names := make([]string, 0, len(sources))
	for n := range sources {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make(map[string]string, len(sources))
	for _, name := range names {
		v, err := ReadSecret(ctx, name, sources[name], baseDir, opts)
		if err != nil {
			return nil, err
		}
		out[name] = v
	}
	return out, nil
}

// ReadSecret reads one credential's value from the source spec: a
// vault-transit key has none (it signs), and a value holding a NUL byte is
// refused (no environment, and no header, can carry one).
func ReadSecret(ctx context.Context, name, spec, baseDir string, opts keys.Options) (string, error) {
	if strings.HasPrefix(spec, "vault-transit:") {
		return "", fmt.Errorf("credential %s: %s signs in Vault and has no value to read", name, spec)
	}
	src, err := keys.ParseSource(spec, baseDir, opts)
	if err != nil {
		return "", fmt.Errorf("credential %s: %w", name, err)
	}
	v, err := src.Read(ctx)
	if err != nil {
		return "", fmt.Errorf("credential %s: %w", name, err)
	}
	if bytes.IndexByte(v, 0) >= 0 {
		return "", fmt.Errorf("credential %s from %s: holds a NUL byte", name, src.Name())
	}
	return string(v), nil
}

// BadHeaderValue says why v cannot be sent as an HTTP header's value ("" when
// it can): a line break or another control character but the tab, which Go's
// HTTP client refuses at each request (RFC 9110, section 5.5).
func BadHeaderValue(v string) string {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			if c == '\r' || c == '\n' {
				return "holds a line break, which no header value may hold (a trailing newline is dropped; one within the value is not)"
			}
			return "holds a control character, which no header value may hold"
		}
	}
	return ""
}
