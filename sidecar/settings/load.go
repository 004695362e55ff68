package settings

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"time"
	"unicode/utf8"
)

// Load reads and checks the settings file at path. Warnings are returned for
// the caller to show; a fault is an *Error naming the file and the place.
func Load(path string) (*Settings, []Warning, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, nil, fmt.Errorf("settings %s: %w", path, err)
	}
	f, err := os.Open(abs)
	if err != nil {
		return nil, nil, fmt.Errorf("settings %s: %w", abs, err)
	}
	defer func() { _ = f.Close() }() // read only: a failed close loses nothing
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, nil, fmt.Errorf("settings %s: %w", abs, err)
	}
	return Parse(abs, data)
}

// Parse checks data as the settings file named file (made absolute; its
// folder is where relative paths are read from). A file named *.yaml or
// *.yml is read as YAML (see [IsYAML]). It reads no other file.
func Parse(file string, data []byte) (s *Settings, warnings []Warning, err error) {
	abs, aerr := filepath.Abs(file)
	if aerr != nil {
		return nil, nil, fmt.Errorf("settings %s: %w", file, aerr)
	}
	defer func() {
		var se *Error
		if errors.As(err, &se) {
			se.File = abs
		}
	}()
	if len(data) > MaxFileSize {
		return nil, nil, &Error{Reason: "larger than 1 MiB"}
	}
	if !utf8.Valid(data) {
		return nil, nil, &Error{Reason: "not UTF-8"}
	}
	if IsYAML(abs) {
		if data, err = yamlToJSON(data); err != nil {
			return nil, nil, err
		}
	}
	root, err := decodeTree(data)
	if err != nil {
		return nil, nil, err
	}
	p := &parser{s: &Settings{File: abs, Dir: filepath.Dir(abs)}}
	if err := p.root(root); err != nil {
		return nil, nil, err
	}
	return p.s, p.warnings, nil
}

type parser struct {
	s         *Settings
	warnings  []Warning
	vaultUser string // place of the first source that needs the vault block
}

func (p *parser) warn(place, msg string) {
	p.warnings = append(p.warnings, Warning{Place: place, Message: msg})
}

func (p *parser) path(n *node) (string, error) {
	v, err := n.nonEmptyText()
	if err != nil {
		return "", err
	}
	return joinDir(p.s.Dir, v), nil
}

// joinDir makes a path written in the settings absolute against their folder.
func joinDir(dir, v string) string {
	if filepath.IsAbs(v) {
		return filepath.Clean(v)
	}
	return filepath.Join(dir, v)
}

var (
	actionRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)
	unitRE   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,15}$`)
	toolRE   = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)
	envRE    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	thumbRE  = regexp.MustCompile(`^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$`)
)

// ToolNameOK reports whether name is in the form a tool name must have:
// 1 to 128 letters, digits, "_", "-" and ".".
func ToolNameOK(name string) bool { return toolRE.MatchString(name) }

func (p *parser) root(n *node) error {
	o, err := asObject(n, "name", "service", "server", "servers", "namespaceSeparator", "agent", "executor", "tools",
		"redaction", "contentRules", "unlisted", "hideUnlisted", "timeout", "denialsPerHour", "callIdInMeta",
		"shutdownWait", "maxWaiting", "maxBytesWaiting", "signTimeout", "signTries", "vault", "kubernetes", "approvals")
	if err != nil {
		return err
	}
	// The steps in the order the members are checked, so that the first fault found stays the same.
	for _, step := range []func(*object) error{p.naming, p.rootParts, p.unlistedTools, p.limits, p.rootClients} {
		if err := step(o); err != nil {
			return err
		}
	}
	if p.vaultUser != "" && p.s.Vault == nil {
		return &Error{Place: p.vaultUser, Reason: "names Vault, but the settings have no vault block"}
	}
	return nil
}

// naming reads the settings' name and service.
func (p *parser) naming(o *object) error {
	s := p.s
	v, err := o.required("name")
	if err != nil {
		return err
	}
	if s.Name, err = v.nonEmptyText(); err != nil {
		return err
	}
	if utf8.RuneCountInString(s.Name) > 200 {
		return &Error{Place: v.place, Reason: "must be 1 to 200 characters"}
	}
	s.Service = DefaultService
	if v := o.get("service"); v != nil {
		if s.Service, err = v.text(); err != nil {
			return err
		}
		if !actionRE.MatchString(s.Service) {
			return &Error{Place: v.place, Reason: "must be a service id: 1 to 64 of a-z, 0-9, '.', '_', '-', starting with a letter or digit"}
		}
	}
	return nil
}

// rootParts reads the tool servers, the agent, the executor, the tools, redaction and the content rules.
func (p *parser) rootParts(o *object) error {
	if err := p.toolServers(o); err != nil {
		return err
	}
	for _, part := range []struct {
		name string
		read func(*node) error
	}{{"agent", p.agent}, {"executor", p.executor}, {"tools", p.tools}} {
		v, err := o.required(part.name)
		if err != nil {
			return err
		}
		if err := part.read(v); err != nil {
			return err
		}
	}
	if v := o.get("redaction"); v != nil {
		if err := p.redaction(v); err != nil {
			return err
		}
	}
	if v := o.get("contentRules"); v != nil {
		var err error
		if p.s.ContentRules, err = p.path(v); err != nil {
			return err
		}
	}
	return nil
}

// unlistedTools reads what becomes of calls to tools no rule names, and whether they are hidden.
func (p *parser) unlistedTools(o *object) error {
	s := p.s
	s.Unlisted = UnlistedRefuse
	if v := o.get("unlisted"); v != nil {
		t, err := v.text()
		if err != nil {
			return err
		}
		switch Unlisted(t) {
		case UnlistedRefuse, UnlistedForward:
			s.Unlisted = Unlisted(t)
		default:
			return &Error{Place: v.place, Reason: `must be "refuse" or "forward"`}
		}
		if s.Unlisted == UnlistedForward {
			p.warn(v.place, "calls to tools no rule names are sent on with no receipt and no denial; the record leaves them out")
		}
	}
	var err error
	s.HideUnlisted, err = p.boolOr(o, "hideUnlisted", true)
	return err
}

// limits reads the times and counts that bound the executor's work.
func (p *parser) limits(o *object) error {
	s := p.s
	var err error
	if s.CallIDInMeta, err = p.boolOr(o, "callIdInMeta", true); err != nil {
		return err
	}
	ms, err := p.wholeOr(o, "timeout", DefaultTimeout.Milliseconds(), MinTimeout.Milliseconds(), MaxTimeout.Milliseconds())
	if err != nil {
		return err
	}
	s.Timeout = time.Duration(ms) * time.Millisecond
	ms, err = p.wholeOr(o, "shutdownWait", DefaultShutdownWait.Milliseconds(), 0, MaxShutdownWait.Milliseconds())
	if err != nil {
		return err
	}
	s.ShutdownWait = time.Duration(ms) * time.Millisecond
	d, err := p.wholeOr(o, "denialsPerHour", DefaultDenialsPerHour, 1, MaxDenialsPerHour)
	if err != nil {
		return err
	}
	s.DenialsPerHour = int(d)
	w, err := p.wholeOr(o, "maxWaiting", DefaultMaxWaiting, 1, MaxMaxWaiting)
	if err != nil {
		return err
	}
	s.MaxWaiting = int(w)
	if s.MaxBytesWaiting, err = p.wholeOr(o, "maxBytesWaiting", DefaultMaxBytesWaiting, MinMaxBytesWaiting, MaxMaxBytesWaiting); err != nil {
		return err
	}
	if ms, err = p.wholeOr(o, "signTimeout", DefaultSignTimeout.Milliseconds(), MinSignTimeout.Milliseconds(), MaxSignTimeout.Milliseconds()); err != nil {
		return err
	}
	s.SignTimeout = time.Duration(ms) * time.Millisecond
	tries, err := p.wholeOr(o, "signTries", DefaultSignTries, 1, MaxSignTries)
	if err != nil {
		return err
	}
	s.SignTries = int(tries)
	return nil
}

// rootClients reads the Vault and Kubernetes clients and the approvals.
func (p *parser) rootClients(o *object) error {
	s := p.s
	var err error
	if v := o.get("vault"); v != nil {
		if s.Vault, err = p.vault(v); err != nil {
			return err
		}
	}
	if v := o.get("kubernetes"); v != nil {
		if s.Kubernetes, err = p.kubernetes(v); err != nil {
			return err
		}
	}
	s.Approvals = defaultApprovals(s.Executor.Copy)
	if v := o.get("approvals"); v != nil {
		if err := p.approvals(v); err != nil {
			return err
		}
	}
	return nil
}

func (p *parser) boolOr(o *object, name string, def bool) (bool, error) {
	v := o.get(name)
	if v == nil {
		return def, nil
	}
	return v.boolean()
}

func (p *parser) wholeOr(o *object, name string, def, lo, hi int64) (int64, error) {
	v := o.get(name)
	if v == nil {
		return def, nil
	}
	return v.whole(lo, hi)
}

// server reads a tool server started as a child (the "server" member, or
// one of "servers") into sv.
func (p *parser) server(n *node, sv *Server) error {
	o, err := asObject(n, "command", "args", "cwd", "path", "env", "passEnv")
	if err != nil {
		return err
	}
	v, err := o.required("command")
	if err != nil {
		return err
	}
	cmd, err := v.nonEmptyText()
	if err != nil {
		return err
	}
	bare := filepath.Base(cmd) == cmd && !filepath.IsAbs(cmd)
	if bare {
		sv.Command = cmd
	} else if sv.Command, err = p.path(v); err != nil {
		return err
	}
	if v := o.get("args"); v != nil {
		if sv.Args, err = v.texts(); err != nil {
			return err
		}
	}
	sv.Cwd = p.s.Dir
	if v := o.get("cwd"); v != nil {
		if sv.Cwd, err = p.path(v); err != nil {
			return err
		}
	}
	if v := o.get("path"); v != nil {
		if v.kind != '[' {
			return &Error{Place: v.place, Reason: "must be a list of folders, not " + kindName(v.kind)}
		}
		if len(v.arr) == 0 {
			return &Error{Place: v.place, Reason: "must name at least one folder (leave it out to use the executor's PATH)"}
		}
		for _, e := range v.arr {
			f, err := p.path(e)
			if err != nil {
				return err
			}
			sv.Path = append(sv.Path, f)
		}
	}
	if bare && sv.Path == nil {
		p.warn(o.place("command"), "a bare name is looked up in the executor's own PATH, which the agent's client sets; name the program by its path or give "+o.place("path"))
	}
	if v := o.get("env"); v != nil {
		if sv.Env, err = p.env(v); err != nil {
			return err
		}
	}
	sv.PassEnv = append([]string(nil), DefaultPassEnv...)
	if v := o.get("passEnv"); v != nil {
		names, err := v.texts()
		if err != nil {
			return err
		}
		seen := map[string]bool{}
		for i, name := range names {
			place := indexPlace(v.place, i)
			if !envRE.MatchString(name) {
				return &Error{Place: place, Reason: "must be a variable name (letters, digits, '_', not starting with a digit)"}
			}
			if seen[name] {
				return &Error{Place: place, Reason: "named twice"}
			}
			seen[name] = true
		}
		sv.PassEnv = names
	}
	return nil
}

func (p *parser) env(n *node) ([]EnvVar, error) {
	return p.secrets(n, func(name string) string {
		if !envRE.MatchString(name) {
			return "must be a variable name (letters, digits, '_', not starting with a digit)"
		}
		return ""
	})
}

// secrets reads an object of names (checked by badName, which gives the
// reason a name is refused or "") to where their values come from.
func (p *parser) secrets(n *node, badName func(string) string) ([]EnvVar, error) {
	if _, err := asObject(n); err != nil {
		return nil, err
	}
	var out []EnvVar
	var err error
	for _, m := range n.obj {
		place := m.val.place
		if why := badName(m.name); why != "" {
			return nil, &Error{Place: place, Reason: why}
		}
		ev := EnvVar{Name: m.name}
		switch m.val.kind {
		case '"':
			if ev.Source, err = p.source(m.val, false); err != nil {
				return nil, err
			}
		case '{':
			if _, err := asObject(m.val, "file", "env", "value"); err != nil {
				return nil, err
			}
			if len(m.val.obj) != 1 {
				return nil, &Error{Place: place, Reason: `must have exactly one of "file", "env" and "value"`}
			}
			inner := m.val.obj[0].val
			switch m.val.obj[0].name {
			case "file":
				if ev.Source, err = p.path(inner); err != nil {
					return nil, err
				}
			case "env":
				name, err := inner.text()
				if err != nil {
					return nil, err
				}
				if !envRE.MatchString(name) {
					return nil, &Error{Place: inner.place, Reason: "must be a variable name"}
				}
				ev.Source = "env:" + name
				p.warn(place, "read from the executor's own environment, which is only as safe as the agent's client that set it")
			case "value":
				if ev.Value, err = inner.text(); err != nil {
					return nil, err
				}
				ev.IsValue = true
				if looksSecret(m.name, ev.Value) {
					p.warn(place, "this looks like a secret, and its value is written in the settings themselves: whoever reads them reads it; "+
						`give a source instead ("file", or vault: or secret:)`)
				}
			}
		default:
			return nil, &Error{Place: place, Reason: "must be a source (text) or an object with file, env or value, not " + kindName(m.val.kind)}
		}
		out = append(out, ev)
	}
	return out, nil
}

func (p *parser) agent(n *node) error {
	o, err := asObject(n, "slip", "book", "keys", "issuerKeys")
	if err != nil {
		return err
	}
	a := &p.s.Agent
	for _, f := range []struct {
		name string
		dst  *string
	}{{"slip", &a.Slip}, {"book", &a.Book}} {
		v, err := o.required(f.name)
		if err != nil {
			return err
		}
		if *f.dst, err = p.path(v); err != nil {
			return err
		}
	}
	v, err := o.required("keys")
	if err != nil {
		return err
	}
	if a.Keys, err = p.keySource(v); err != nil {
		return err
	}
	if v := o.get("issuerKeys"); v != nil {
		keys, err := v.texts()
		if err != nil {
			return err
		}
		if len(keys) == 0 {
			return &Error{Place: v.place, Reason: "an empty list trusts no passkey, and the executor starts only under a slip signed by a passkey it trusts: " +
				"name the thumbprint of the person's passkey (`mcp-executor page` shows it once the passkey is registered), " +
				"or leave the member out until you have it (keys, tools and page work without it)"}
		}
		seen := map[string]bool{}
		for i, k := range keys {
			if !thumbRE.MatchString(k) {
				return &Error{Place: indexPlace(v.place, i), Reason: "must be a key thumbprint: 43 characters of base64url"}
			}
			if seen[k] {
				return &Error{Place: indexPlace(v.place, i), Reason: "named twice"}
			}
			seen[k] = true
		}
		a.IssuerKeys = keys
	}
	// Left out, the settings still read: its value is known only once the
	// person has registered a passkey on the page, which reads these very
	// settings. The start and check refuse it (see [Settings.TrustsAPasskey]).
	return nil
}

func (p *parser) executor(n *node) error {
	o, err := asObject(n, "keys", "copy", "copyKey")
	if err != nil {
		return err
	}
	e := &p.s.Executor
	v, err := o.required("keys")
	if err != nil {
		return err
	}
	if e.Keys, err = p.keySource(v); err != nil {
		return err
	}
	if v, err = o.required("copy"); err != nil {
		return err
	}
	if e.Copy, err = p.path(v); err != nil {
		return err
	}
	if v, err = o.required("copyKey"); err != nil {
		return err
	}
	if e.CopyKey, err = p.source(v, false); err != nil {
		return err
	}
	return nil
}

func (p *parser) keySource(n *node) (KeySource, error) {
	if n.kind == '"' {
		s, err := p.source(n, false)
		if err != nil {
			var se *Error
			if errors.As(err, &se) && se.Reason == errTransitAlone {
				se.Reason = `vault-transit holds only the Ed25519 half: write {"ed25519": "vault-transit:<key>", "mldsa87": "<source of the ML-DSA-87 seed>"}`
			}
		}
		return KeySource{Whole: s}, err
	}
	o, err := asObject(n, "ed25519", "mldsa87")
	if err != nil {
		return KeySource{}, err
	}
	var k KeySource
	v, err := o.required("ed25519")
	if err != nil {
		return k, err
	}
	if k.Ed25519, err = p.source(v, true); err != nil {
		return k, err
	}
	if v, err = o.required("mldsa87"); err != nil {
		return k, err
	}
	if k.MLDSA87, err = p.source(v, false); err != nil {
		return k, err
	}
	return k, nil
}

func (p *parser) vault(n *node) (*Vault, error) {
	o, err := asObject(n, "address", "caFile", "namespace", "auth")
	if err != nil {
		return nil, err
	}
	vt := &Vault{}
	if v := o.get("address"); v != nil {
		if vt.Address, err = v.nonEmptyText(); err != nil {
			return nil, err
		}
		u, err := url.Parse(vt.Address)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, &Error{Place: v.place, Reason: "must be an http or https address"}
		}
	}
	if v := o.get("caFile"); v != nil {
		if vt.CAFile, err = p.path(v); err != nil {
			return nil, err
		}
	}
	if v := o.get("namespace"); v != nil {
		if vt.Namespace, err = v.nonEmptyText(); err != nil {
			return nil, err
		}
	}
	v, err := o.required("auth")
	if err != nil {
		return nil, err
	}
	if err := p.vaultAuth(v, vt); err != nil {
		return nil, err
	}
	return vt, nil
}

// vaultAuth reads the vault block's auth: exactly one of kubernetes, token and appRole.
func (p *parser) vaultAuth(v *node, vt *Vault) error {
	if _, err := asObject(v, "kubernetes", "token", "appRole"); err != nil {
		return err
	}
	if len(v.obj) != 1 {
		return &Error{Place: v.place, Reason: `must have exactly one of "kubernetes", "token" and "appRole"`}
	}
	m := v.obj[0]
	var err error
	switch m.name {
	case "kubernetes":
		vt.Auth.Kubernetes, err = p.vaultKubernetes(m.val)
	case "token":
		var to *object
		if to, err = asObject(m.val, "file"); err != nil {
			return err
		}
		t := &VaultToken{}
		if x := to.get("file"); x != nil {
			if t.File, err = p.path(x); err != nil {
				return err
			}
		}
		vt.Auth.Token = t
	case "appRole":
		vt.Auth.AppRole, err = p.vaultAppRole(m.val)
	}
	return err
}

// vaultKubernetes reads Vault's Kubernetes auth.
func (p *parser) vaultKubernetes(n *node) (*VaultKubernetes, error) {
	ko, err := asObject(n, "role", "mount", "tokenFile")
	if err != nil {
		return nil, err
	}
	k := &VaultKubernetes{Mount: "kubernetes", TokenFile: DefaultServiceAccountToken}
	r, err := ko.required("role")
	if err != nil {
		return nil, err
	}
	if k.Role, err = r.nonEmptyText(); err != nil {
		return nil, err
	}
	if x := ko.get("mount"); x != nil {
		if k.Mount, err = x.nonEmptyText(); err != nil {
			return nil, err
		}
	}
	if x := ko.get("tokenFile"); x != nil {
		if k.TokenFile, err = p.path(x); err != nil {
			return nil, err
		}
	}
	return k, nil
}

// vaultAppRole reads Vault's AppRole auth.
func (p *parser) vaultAppRole(n *node) (*VaultAppRole, error) {
	ro, err := asObject(n, "roleIdFile", "secretIdFile", "mount")
	if err != nil {
		return nil, err
	}
	a := &VaultAppRole{Mount: "approle"}
	x, err := ro.required("roleIdFile")
	if err != nil {
		return nil, err
	}
	if a.RoleIDFile, err = p.path(x); err != nil {
		return nil, err
	}
	if x, err = ro.required("secretIdFile"); err != nil {
		return nil, err
	}
	if a.SecretIDFile, err = p.path(x); err != nil {
		return nil, err
	}
	if x := ro.get("mount"); x != nil {
		if a.Mount, err = x.nonEmptyText(); err != nil {
			return nil, err
		}
	}
	return a, nil
}

func (p *parser) kubernetes(n *node) (*Kubernetes, error) {
	o, err := asObject(n, "kubeconfig")
	if err != nil {
		return nil, err
	}
	k := &Kubernetes{}
	if v := o.get("kubeconfig"); v != nil {
		if k.Kubeconfig, err = p.path(v); err != nil {
			return nil, err
		}
	}
	return k, nil
}
