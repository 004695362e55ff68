package keys

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/seed-6e06167c/mcp-executor/keys/kube"
	"github.com/seed-6e06167c/mcp-executor/keys/vault"
)

// SourceStatus is what check shows about one source. It holds no secret:
// the value is read and dropped.
type SourceStatus struct {
	Source  string // the spec
	Where   string // Describe()
	Auth    string // how the store was reached: "file", "environment", the Vault auth method, the Kubernetes credentials
	Reached bool   // the store answered (the value may still be missing or refused)
	Present bool   // the value (or the Transit key) is there and was read
	Note    string // more, e.g. the Transit key's version
	Err     error  // why it was not read; nil when Present
}

// CheckSource reaches the source spec names and reports on it.
func CheckSource(ctx context.Context, spec, baseDir string, opts Options) SourceStatus {
	src, err := ParseSource(spec, baseDir, opts)
	if err != nil {
		return SourceStatus{Source: spec, Err: err}
	}
	st := SourceStatus{Source: spec, Where: src.Describe()}
	switch s := src.(type) {
	case *fileSource:
		st.Auth = "file"
	case *envSource:
		st.Auth = "environment"
	case *kvSource:
		st.Auth = s.v.AuthMethod()
	case *secretSource:
		st.Auth = s.k.Auth()
	case *transitSource:
		st.Auth = s.v.AuthMethod()
		key, err := s.v.ReadTransitKey(ctx, s.mount, s.name)
		st.Reached, st.Err = reached(err), err
		if err == nil {
			st.Present = true
			st.Note = fmt.Sprintf("ed25519 version %d, exportable %t; open-source Vault's Transit has no ML-DSA keys, so the ML-DSA-87 half comes from a secret", key.Version, key.Exportable)
		}
		return st
	}
	_, err = src.Read(ctx)
	st.Reached, st.Err = reached(err), err
	st.Present = err == nil
	return st
}

// reached says whether err (nil included) shows that the store answered.
func reached(err error) bool {
	var ve *vault.Error
	switch {
	case err == nil, errors.Is(err, fs.ErrNotExist), errors.Is(err, kube.ErrForbidden):
		return true
	case errors.As(err, &ve):
		return ve.Status != 0
	}
	return false
}

// KeySetStatus is what check shows about a key set.
type KeySetStatus struct {
	Sources     []SourceStatus
	Fingerprint string // of the public key set, when it loaded
	Transit     bool   // the Ed25519 half signs in Vault Transit
	Err         error
}

// CheckKeySet reports on each source of a key set and loads it (without
// creating anything) to give its public fingerprint.
func CheckKeySet(ctx context.Context, spec KeySetSpec, baseDir string, opts Options) KeySetStatus {
	var st KeySetStatus
	st.Sources = append(st.Sources, CheckSource(ctx, spec.Source, baseDir, opts))
	if spec.MLDSA != "" {
		st.Sources = append(st.Sources, CheckSource(ctx, spec.MLDSA, baseDir, opts))
	}
	s, err := LoadKeySet(ctx, spec, baseDir, opts)
	if err != nil {
		st.Err = err
		return st
	}
	_, st.Transit = s.(*TransitSigner)
	st.Fingerprint = s.Keys().Fingerprint()
	return st
}
