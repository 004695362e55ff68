package settings

import (
	"path/filepath"
	"regexp"
	"strings"
)

// Source strings name where a secret is read from:
//
//	a file path                      relative to the settings file's folder
//	env:NAME                         the executor's own environment (warned against)
//	vault:<mount>/<path>#<field>     a field of a Vault KV v2 secret
//	vault-transit:<key>              a Vault Transit key (Ed25519 half of a key set only)
//	secret:<namespace>/<name>#<key>  a key of a Kubernetes Secret
//
// A file name containing a colon before any "/" is written with "./" in front.
var (
	sourcePrefixRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
	vaultRE        = regexp.MustCompile(`^vault:[^/#\s]+/[^#\s]+#[^#\s]+$`)
	transitRE      = regexp.MustCompile(`^vault-transit:[A-Za-z0-9_.-]+$`)
	secretRE       = regexp.MustCompile(`^secret:[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?/[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?#[-._a-zA-Z0-9]{1,253}$`)
)

const errTransitAlone = "vault-transit is not allowed here"

// source checks a source string; file paths come back absolute.
func (p *parser) source(n *node, allowTransit bool) (string, error) {
	s, err := n.nonEmptyText()
	if err != nil {
		return "", err
	}
	bad := func(form string) error {
		return &Error{Place: n.place, Reason: "must be " + form}
	}
	switch {
	case strings.HasPrefix(s, "env:"):
		if !envRE.MatchString(s[len("env:"):]) {
			return "", bad("env:<variable name>")
		}
		p.warn(n.place, "read from the executor's own environment, which is only as safe as the agent's client that set it")
		return s, nil
	case strings.HasPrefix(s, "vault-transit:"):
		if !allowTransit {
			return "", &Error{Place: n.place, Reason: errTransitAlone}
		}
		if !transitRE.MatchString(s) {
			return "", bad("vault-transit:<key name>")
		}
		p.needVault(n.place)
		return s, nil
	case strings.HasPrefix(s, "vault:"):
		if !vaultRE.MatchString(s) {
			return "", bad("vault:<mount>/<path>#<field>")
		}
		p.needVault(n.place)
		return s, nil
	case strings.HasPrefix(s, "secret:"):
		if !secretRE.MatchString(s) {
			return "", bad("secret:<namespace>/<name>#<key>")
		}
		return s, nil
	case sourcePrefixRE.MatchString(s) && !strings.Contains(s[:strings.Index(s, ":")], "/"):
		return "", bad(`a file path, env:, vault:, vault-transit: or secret: (write "./" before a file name with a colon)`)
	}
	if filepath.IsAbs(s) {
		return filepath.Clean(s), nil
	}
	return filepath.Join(p.s.Dir, s), nil
}

func (p *parser) needVault(place string) {
	if p.vaultUser == "" {
		p.vaultUser = place
	}
}
