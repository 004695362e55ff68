package boot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/keys"
	"github.com/seed-6e06167c/mcp-executor/keys/kube"
	"github.com/seed-6e06167c/mcp-executor/keys/vault"
	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
)

// KeySetSpec is the keys package's form of a key source the settings name.
func KeySetSpec(k settings.KeySource) keys.KeySetSpec {
	if k.Whole != "" {
		return keys.KeySetSpec{Source: k.Whole}
	}
	return keys.KeySetSpec{Source: k.Ed25519, MLDSA: k.MLDSA87}
}

// KeyOptions makes the Vault and Kubernetes clients the settings name.
func KeyOptions(set *settings.Settings, log *slog.Logger) (keys.Options, func() error, error) {
	o := keys.Options{Logger: log}
	closeFn := func() error { return nil }
	if v := set.Vault; v != nil {
		vo := vault.Options{Address: v.Address, CAFile: v.CAFile, Namespace: v.Namespace, Logger: log}
		switch {
		case v.Auth.Kubernetes != nil:
			vo.Auth.Kubernetes = &vault.KubernetesAuth{Role: v.Auth.Kubernetes.Role, Mount: v.Auth.Kubernetes.Mount, TokenFile: v.Auth.Kubernetes.TokenFile}
		case v.Auth.Token != nil:
			vo.Auth.Token = &vault.TokenAuth{File: v.Auth.Token.File}
		case v.Auth.AppRole != nil:
			vo.Auth.AppRole = &vault.AppRoleAuth{RoleIDFile: v.Auth.AppRole.RoleIDFile, SecretIDFile: v.Auth.AppRole.SecretIDFile, Mount: v.Auth.AppRole.Mount}
		}
		c, err := vault.New(vo)
		if err != nil {
			return o, nil, fmt.Errorf("vault: %w", err)
		}
		o.Vault = c
		closeFn = func() error { c.Close(); return nil }
	}
	if k := set.Kubernetes; k != nil {
		c, err := kube.New(kube.Options{Kubeconfig: k.Kubeconfig})
		if err != nil {
			_ = closeFn() // the Vault client's Close reports nothing: closeFn returns nil
			return o, nil, fmt.Errorf("kubernetes: %w", err)
		}
		o.Kube = c
	}
	return o, closeFn, nil
}

// Clients makes the Vault and Kubernetes clients the settings name,
// each on its own (for the reports), so that a fault in one still lets the sources of the
// other be reached. The faults are returned beside the options.
func Clients(set *settings.Settings, log *slog.Logger) (keys.Options, func(), []error) {
	o := keys.Options{Logger: log}
	var closers []func() error
	var errs []error
	if set.Vault != nil {
		only := *set
		only.Kubernetes = nil
		vo, closeFn, err := KeyOptions(&only, log)
		if err != nil {
			errs = append(errs, err)
		} else {
			o.Vault = vo.Vault
			closers = append(closers, closeFn)
		}
	}
	if set.Kubernetes != nil {
		only := *set
		only.Vault = nil
		ko, closeFn, err := KeyOptions(&only, log)
		if err != nil {
			errs = append(errs, err)
		} else {
			o.Kube = ko.Kube
			closers = append(closers, closeFn)
		}
	}
	return o, func() {
		for _, c := range closers {
			_ = c()
		}
	}, errs
}

// LoadCopyKey reads the copy key, making one only while the copy holds no
// line: a copy that holds lines and has lost its key cannot be read, and a
// new key would make every later start and compare say the key is wrong.
func LoadCopyKey(ctx context.Context, set *settings.Settings, kopts keys.Options, log *slog.Logger) ([]byte, error) {
	if fi, err := os.Stat(set.Executor.Copy); err == nil && fi.Size() > 0 {
		key, err := keys.LoadCopyKey(ctx, set.Executor.CopyKey, set.Dir, kopts)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("copy %s holds lines and there is no copy key (%s): the copy cannot be read, so the executor does not start; put the copy key back: %w",
				set.Executor.Copy, set.Executor.CopyKey, copylog.ErrKeyMissing)
		}
		if err != nil {
			return nil, fmt.Errorf("the copy key: %w", err)
		}
		return key, nil
	}
	key, created, err := keys.LoadOrCreateCopyKey(ctx, set.Executor.CopyKey, set.Dir, kopts)
	if err != nil {
		return nil, fmt.Errorf("the copy key: %w", err)
	}
	if created {
		log.Info("made a new copy key", slog.String("source", set.Executor.CopyKey))
	}
	return key, nil
}
