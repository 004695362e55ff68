package keys

import (
	"context"
	"crypto/rand"
	"fmt"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
)

// CopyKeySize is the size of the copy's HMAC key.
const CopyKeySize = 32

// The copy key is stored as text: its 32 bytes in base64url without padding
// (43 characters), so that it fits an environment variable, a Vault KV field
// and a Secret alike. A file may end with one newline.

// ParseCopyKey reads a stored copy key.
func ParseCopyKey(text []byte) ([]byte, error) {
	if len(text) != 43 {
		return nil, fmt.Errorf("not 43 characters of base64url (32 bytes)")
	}
	b, err := canon.UnB64(string(text))
	if err != nil || len(b) != CopyKeySize {
		return nil, fmt.Errorf("not 43 characters of base64url (32 bytes)")
	}
	return b, nil
}

// NewCopyKey returns the stored text of a fresh random copy key.
func NewCopyKey() []byte {
	b := make([]byte, CopyKeySize)
	rand.Read(b) // never fails (crypto/rand, Go 1.24+)
	return []byte(canon.B64(b))
}

// LoadCopyKey reads the copy key from the source spec names. The copy key
// must exist for compare: a missing one is an error here.
func LoadCopyKey(ctx context.Context, spec, baseDir string, opts Options) ([]byte, error) {
	k, _, err := loadCopyKey(ctx, spec, baseDir, opts, false)
	return k, err
}

// LoadOrCreateCopyKey is LoadCopyKey, but a missing key is made and stored
// first where the source can hold it (see LoadOrCreateKeySet).
func LoadOrCreateCopyKey(ctx context.Context, spec, baseDir string, opts Options) (key []byte, created bool, err error) {
	return loadCopyKey(ctx, spec, baseDir, opts, true)
}

func loadCopyKey(ctx context.Context, spec, baseDir string, opts Options, create bool) ([]byte, bool, error) {
	src, err := ParseSource(spec, baseDir, opts)
	if err != nil {
		return nil, false, fmt.Errorf("copy key: %w", err)
	}
	text, created, err := readOrCreate(ctx, src, create, NewCopyKey)
	if err != nil {
		return nil, false, fmt.Errorf("copy key %s: %w", src.Name(), err)
	}
	key, err := ParseCopyKey(text)
	if err != nil {
		return nil, false, fmt.Errorf("copy key %s (%s): %w", src.Name(), src.Describe(), err)
	}
	return key, created, nil
}
