package sidecar

// This file and the other inspect_*.go files hold what the commands that
// look at an executor's folder without running it need: `check` (read
// everything, write nothing), `keys` (make what is missing, print what goes
// into the permission) and `compare` (hold the copy against the book while
// the executor may be running). They reuse the start's helpers (keyOptions,
// keySetSpec, decodeEnvelope) so that they read exactly what Open reads.

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/seed-6e06167c/mcp-executor/keys"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
)

// RulesSoftwareName is the agent.software name under which a slip states
// the rules on content of the executor named name.
func RulesSoftwareName(name string) string { return rulesSoftwarePrefix + name }

// inspectClients makes the Vault and Kubernetes clients the settings name,
// each on its own, so that a fault in one still lets the sources of the
// other be reached. The faults are returned beside the options.
func inspectClients(set *settings.Settings, log *slog.Logger) (keys.Options, func(), []error) {
	o := keys.Options{Logger: log}
	var closers []func() error
	var errs []error
	if set.Vault != nil {
		only := *set
		only.Kubernetes = nil
		vo, closeFn, err := keyOptions(&only, log)
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
		ko, closeFn, err := keyOptions(&only, log)
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

// readSlipFile reads a slip file as a canonical value, as Open does.
func readSlipFile(path string) (any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading slip %s: %w", path, err)
	}
	v, err := decodeEnvelope(data)
	if err != nil {
		return nil, fmt.Errorf("reading slip %s: %w", path, err)
	}
	return v, nil
}

// statesRules reports whether a slip states rules on content.
func statesRules(sl *slip.Slip) bool {
	for _, sw := range sl.Agent.Software {
		if strings.HasPrefix(sw.Name, rulesSoftwarePrefix) {
			return true
		}
	}
	return false
}

// fileExists reports whether path names something; an error other than
// "not there" is returned.
func fileExists(path string) (bool, error) {
	_, err := os.Stat(path)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return false, err
}
