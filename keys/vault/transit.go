package vault

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/hashicorp/vault/api"
)

// TransitKey is the public side of an ed25519 key of the Transit engine.
type TransitKey struct {
	Mount      string
	Name       string
	Version    int               // the key version read (the latest); signing is pinned to it
	Public     ed25519.PublicKey // of that version
	Exportable bool              // the key may be exported: its private key can leave Vault
}

// ReadTransitKey reads a Transit key's latest public key
// (GET <mount>/keys/<name>). The key must be of type ed25519. A missing
// key gives an error matching fs.ErrNotExist.
func (c *Client) ReadTransitKey(ctx context.Context, mount, name string) (*TransitKey, error) {
	p := mount + "/keys/" + name
	s, err := c.call(ctx, "reading Transit key", p, func(a *api.Client) (*api.Secret, error) {
		return a.Logical().ReadWithContext(ctx, p)
	})
	if err != nil {
		return nil, err
	}
	if s == nil || s.Data == nil {
		return nil, &Error{Address: c.address, Op: "reading Transit key", Path: p, Auth: c.auth.describe(), Status: 404}
	}
	bad := func(what string) error {
		return fmt.Errorf("vault %s: Transit key %s: %s", c.address, p, what)
	}
	if t, _ := s.Data["type"].(string); t != "ed25519" {
		return nil, bad(fmt.Sprintf("type %q, want ed25519 (open-source Vault has no ML-DSA keys; the executor uses Transit for the Ed25519 half only)", t))
	}
	latest, err := number(s.Data["latest_version"])
	if err != nil || latest < 1 {
		return nil, bad("no latest_version")
	}
	versions, _ := s.Data["keys"].(map[string]any)
	v, _ := versions[strconv.Itoa(latest)].(map[string]any)
	pubText, _ := v["public_key"].(string)
	pub, err := base64.StdEncoding.DecodeString(pubText)
	if err != nil || len(pub) != ed25519.PublicKeySize {
		return nil, bad(fmt.Sprintf("version %d has no 32-byte public_key", latest))
	}
	exportable, _ := s.Data["exportable"].(bool)
	return &TransitKey{Mount: mount, Name: name, Version: latest, Public: ed25519.PublicKey(pub), Exportable: exportable}, nil
}

// TransitSign signs input with version of a Transit ed25519 key
// (POST <mount>/sign/<name>) and returns the 64-byte signature.
func (c *Client) TransitSign(ctx context.Context, mount, name string, version int, input []byte) ([]byte, error) {
	p := mount + "/sign/" + name
	body := map[string]any{"input": base64.StdEncoding.EncodeToString(input), "key_version": version}
	s, err := c.call(ctx, "signing with Transit key", p, func(a *api.Client) (*api.Secret, error) {
		return a.Logical().WriteWithContext(ctx, p, body)
	})
	if err != nil {
		return nil, err
	}
	var text string
	if s != nil {
		text, _ = s.Data["signature"].(string)
	}
	// "vault:v<version>:<base64 signature>"
	parts := strings.SplitN(text, ":", 3)
	if len(parts) != 3 || parts[0] != "vault" {
		return nil, fmt.Errorf("vault %s: signing with Transit key %s: no signature in the answer", c.address, p)
	}
	sig, err := base64.StdEncoding.DecodeString(parts[2])
	if err != nil || len(sig) != ed25519.SignatureSize {
		return nil, fmt.Errorf("vault %s: signing with Transit key %s: the signature is not 64 bytes of base64", c.address, p)
	}
	return sig, nil
}

// CreateTransitKey makes a Transit key of type ed25519, not exportable
// (POST <mount>/keys/<name>). When a key of that name is there it returns
// an error matching fs.ErrExist and changes nothing.
func (c *Client) CreateTransitKey(ctx context.Context, mount, name string) error {
	if _, err := c.ReadTransitKey(ctx, mount, name); err == nil {
		return fmt.Errorf("vault %s: Transit key %s/keys/%s: %w", c.address, mount, name, fs.ErrExist)
	} else if !isNotExist(err) {
		return err
	}
	p := mount + "/keys/" + name
	_, err := c.call(ctx, "creating Transit key", p, func(a *api.Client) (*api.Secret, error) {
		return a.Logical().WriteWithContext(ctx, p, map[string]any{"type": "ed25519", "exportable": false})
	})
	return err
}

func number(v any) (int, error) {
	switch n := v.(type) {
	case json.Number:
		i, err := n.Int64()
		return int(i), err
	case float64:
		return int(n), nil
	case int:
		return n, nil
	}
	return 0, fmt.Errorf("not a number")
}
