package vault

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"

	"github.com/hashicorp/vault/api"
)

// KV v2 keeps a secret's fields at <mount>/data/<path>; a field is one
// member of that secret's data.

// ReadKVField returns one string field of the latest version of a KV
// version 2 secret. A missing secret, a deleted latest version or a missing
// field gives an error matching fs.ErrNotExist.
func (c *Client) ReadKVField(ctx context.Context, mount, path, field string) ([]byte, error) {
	data, _, err := c.readKV(ctx, mount, path)
	if err != nil {
		return nil, err
	}
	p := kvDataPath(mount, path)
	v, ok := data[field]
	if !ok {
		return nil, fmt.Errorf("vault %s: KV secret %s has no field %q: %w", c.address, p, field, fs.ErrNotExist)
	}
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("vault %s: KV secret %s field %q is not a string", c.address, p, field)
	}
	return []byte(s), nil
}

// CreateKVField adds a string field to a KV version 2 secret (making the
// secret when there is none), keeping its other fields. It never replaces
// a field: when the field is there it returns an error matching
// fs.ErrExist. The write is check-and-set on the version read, so a
// concurrent writer makes it fail rather than be lost.
func (c *Client) CreateKVField(ctx context.Context, mount, path, field string, value []byte) error {
	data, version, err := c.readKV(ctx, mount, path)
	if err != nil && !isNotExist(err) {
		return err
	}
	p := kvDataPath(mount, path)
	if _, ok := data[field]; ok {
		return fmt.Errorf("vault %s: KV secret %s already has field %q: %w", c.address, p, field, fs.ErrExist)
	}
	next := maps.Clone(data)
	if next == nil {
		next = map[string]any{}
	}
	next[field] = string(value)
	_, err = c.call(ctx, "writing KV field "+field+" of", p, func(a *api.Client) (*api.Secret, error) {
		return a.Logical().WriteWithContext(ctx, p, map[string]any{"options": map[string]any{"cas": version}, "data": next})
	})
	return err
}

// readKV returns the data and version of a KV v2 secret; data is nil and
// the error matches fs.ErrNotExist when there is none.
func (c *Client) readKV(ctx context.Context, mount, path string) (map[string]any, int64, error) {
	p := kvDataPath(mount, path)
	s, err := c.call(ctx, "reading KV secret", p, func(a *api.Client) (*api.Secret, error) {
		return a.Logical().ReadWithContext(ctx, p)
	})
	if err != nil {
		return nil, 0, err
	}
	if s == nil || s.Data == nil {
		return nil, 0, &Error{Address: c.address, Op: "reading KV secret", Path: p, Auth: c.auth.describe(), Status: 404}
	}
	var version int64
	if md, ok := s.Data["metadata"].(map[string]any); ok {
		if n, ok := md["version"].(json.Number); ok {
			version, _ = n.Int64()
		}
	}
	data, _ := s.Data["data"].(map[string]any)
	if data == nil { // the latest version is deleted
		return nil, version, &Error{Address: c.address, Op: "reading KV secret (latest version deleted)", Path: p, Auth: c.auth.describe(), Status: 404}
	}
	return data, version, nil
}

func kvDataPath(mount, path string) string { return mount + "/data/" + path }

func isNotExist(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == 404
}
