package keys

import (
	"context"
	"fmt"
	"io/fs"
	"os"
)

// envSource is a secret in an environment variable of the executor. It is
// read as is (no newline dropped) and cannot be created.
type envSource struct {
	spec string
	name string
}

func (s *envSource) Name() string     { return s.spec }
func (s *envSource) Describe() string { return "environment variable " + s.name }

func (s *envSource) Read(ctx context.Context) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", s.Describe(), err)
	}
	v, ok := os.LookupEnv(s.name)
	if !ok {
		return nil, fmt.Errorf("reading %s: not set: %w", s.Describe(), fs.ErrNotExist)
	}
	if v == "" {
		return nil, fmt.Errorf("reading %s: set but empty: %w", s.Describe(), fs.ErrNotExist)
	}
	if len(v) > MaxValueSize {
		return nil, fmt.Errorf("reading %s: larger than %d bytes", s.Describe(), MaxValueSize)
	}
	return []byte(v), nil
}
