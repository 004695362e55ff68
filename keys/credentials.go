package keys

import (
	"bytes"
	"context"
	"fmt"
	"sort"
)

// ResolveEnv reads the tool server's credentials: sources maps an
// environment variable name to the source of its value. It returns name →
// value. A value may not hold a NUL byte (an environment cannot carry one).
// Errors name the variable and its source, never a value.
func ResolveEnv(ctx context.Context, sources map[string]string, baseDir string, opts Options) (map[string]string, error) {
	names := make([]string, 0, len(sources))
	for n := range sources {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make(map[string]string, len(sources))
	for _, name := range names {
		if !envNameRE.MatchString(name) {
			return nil, fmt.Errorf("credential %q: not an environment variable name", name)
		}
		src, err := ParseSource(sources[name], baseDir, opts)
		if err != nil {
			return nil, fmt.Errorf("credential %s: %w", name, err)
		}
		if _, ok := src.(*transitSource); ok {
			return nil, fmt.Errorf("credential %s: %s signs in Vault and has no value to read", name, src.Name())
		}
		v, err := src.Read(ctx)
		if err != nil {
			return nil, fmt.Errorf("credential %s: %w", name, err)
		}
		if bytes.IndexByte(v, 0) >= 0 {
			return nil, fmt.Errorf("credential %s from %s: holds a NUL byte", name, src.Name())
		}
		out[name] = string(v)
	}
	return out, nil
}
