package settings

import (
	"net"
	"net/url"
	"regexp"
	"strings"

	"github.com/seed-6e06167c/mcp-executor/sidecar/policy/glob"
	"github.com/seed-6e06167c/mcp-executor/sidecar/policy/quota"
)

// This file reads the members of several tool servers and of policy:
// "servers", "namespaceSeparator", glob tool rules with "refuse" and
// "quota", and "redaction".

// Upstream is one tool server of "servers": exactly one of Stdio (a child
// process, with the members of "server") and HTTP (reached by streamable
// HTTP).
type Upstream struct {
	Name  string
	Stdio *Server
	HTTP  *HTTPServer
}

// HTTPServer is a tool server reached by streamable HTTP.
type HTTPServer struct {
	// URL is https, or http to a loopback address (with a warning).
	URL string
	// Headers sent with every request, in file order; their values come
	// from sources as a stdio server's environment does (Name is the
	// header's name).
	Headers []EnvVar
}

// Namespace separators.
const (
	DefaultNamespaceSeparator = "."
	MaxServerName             = 32
	MaxQuota                  = 1000000
)

var (
	serverNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$`)
	headerNameRE = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
)

// headersTheTransportSets are headers the streamable HTTP client writes
// itself; a setting could only break it.
var headersTheTransportSets = []string{"Accept", "Connection", "Content-Length", "Content-Type", "Host",
	"Last-Event-Id", "Mcp-Protocol-Version", "Mcp-Session-Id", "Transfer-Encoding", "Upgrade"}

// toolServers reads "server" or "servers" (exactly one) and
// "namespaceSeparator".
func (p *parser) toolServers(o *object) error {
	s := p.s
	one, many := o.get("server"), o.get("servers")
	sepNode := o.get("namespaceSeparator")
	s.NamespaceSeparator = DefaultNamespaceSeparator
	if sepNode != nil {
		sep, err := sepNode.text()
		if err != nil {
			return err
		}
		if sep != "." && sep != "__" {
			return &Error{Place: sepNode.place, Reason: `must be "." or "__" (for clients that refuse dots in tool names)`}
		}
		s.NamespaceSeparator = sep
	}
	switch {
	case one != nil && many != nil:
		return &Error{Place: many.place, Reason: `give either "server" (one tool server) or "servers" (several, by name), not both`}
	case one == nil && many == nil:
		return &Error{Place: o.place("server"), Reason: `missing: give "server" (one tool server) or "servers" (several, by name)`}
	case one != nil:
		if sepNode != nil {
			p.warn(sepNode.place, `has no effect with a single "server": its tools keep their own names`)
		}
		return p.server(one, &s.Server)
	}
	if _, err := asObject(many); err != nil {
		return err
	}
	if len(many.obj) == 0 {
		return &Error{Place: many.place, Reason: "must name at least one tool server"}
	}
	s.Servers = make(map[string]Upstream, len(many.obj))
	for _, m := range many.obj {
		if why := p.badServerName(m.name); why != "" {
			return &Error{Place: m.val.place, Reason: why}
		}
		u := Upstream{Name: m.name}
		if m.val.kind == '{' && hasMember(m.val, "url") {
			h, err := p.httpServer(m.val)
			if err != nil {
				return err
			}
			u.HTTP = h
		} else {
			u.Stdio = &Server{}
			if err := p.server(m.val, u.Stdio); err != nil {
				return err
			}
		}
		s.Servers[m.name] = u
		s.ServerOrder = append(s.ServerOrder, m.name)
	}
	return nil
}

func hasMember(n *node, name string) bool {
	for _, m := range n.obj {
		if m.name == name {
			return true
		}
	}
	return false
}

// badServerName gives why name cannot name a server, or "". A name never
// holds the separator nor ends in its first character, so a tool name
// splits at its first separator into server and tool unambiguously.
func (p *parser) badServerName(name string) string {
	sep := p.s.NamespaceSeparator
	if !serverNameRE.MatchString(name) {
		return "not a server name: 1 to 32 letters, digits, '_' and '-', starting with a letter or digit"
	}
	if strings.Contains(name, sep) || strings.HasSuffix(name, sep[:1]) {
		return "a server name must not hold the namespace separator " + `"` + sep + `"` + " nor end in " + `"` + sep[:1] + `"`
	}
	return ""
}

func (p *parser) httpServer(n *node) (*HTTPServer, error) {
	o, err := asObject(n, "url", "headers")
	if err != nil {
		return nil, err
	}
	h := &HTTPServer{}
	v, err := o.required("url")
	if err != nil {
		return nil, err
	}
	if h.URL, err = v.nonEmptyText(); err != nil {
		return nil, err
	}
	u, err := url.Parse(h.URL)
	if err != nil || u.Host == "" || u.Opaque != "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, &Error{Place: v.place, Reason: "must be an https address, such as https://tools.example/mcp"}
	}
	if u.User != nil {
		return nil, &Error{Place: v.place, Reason: `must not hold credentials: send them in "headers", read from a secret source`}
	}
	if u.Fragment != "" {
		return nil, &Error{Place: v.place, Reason: "must not have a fragment (#…)"}
	}
	if u.Scheme == "http" {
		if !loopback(u.Hostname()) {
			return nil, &Error{Place: v.place, Reason: "must be https: plain http is allowed only to a loopback address (localhost, 127.0.0.1, ::1)"}
		}
		p.warn(v.place, "plain http: the server's traffic is not encrypted (allowed only to a loopback address)")
	}
	if v := o.get("headers"); v != nil {
		seen := map[string]bool{}
		h.Headers, err = p.secrets(v, func(name string) string {
			if !headerNameRE.MatchString(name) {
				return "not an HTTP header name"
			}
			for _, t := range headersTheTransportSets {
				if strings.EqualFold(name, t) {
					return "the streamable HTTP client sets " + t + " itself; remove it"
				}
			}
			if seen[strings.ToLower(name)] {
				return "header named twice (names are compared without regard to case)"
			}
			seen[strings.ToLower(name)] = true
			return ""
		})
		if err != nil {
			return nil, err
		}
	}
	return h, nil
}

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// toolPattern checks the name of a tool rule: an exact tool name or a glob.
// With several servers an exact name must begin with a server's name and
// the separator.
func (p *parser) toolPattern(name, place string) error {
	if err := glob.Check(name); err != nil {
		return &Error{Place: place, Reason: "not a tool name or pattern: " + err.Error()}
	}
	exact := !strings.ContainsAny(name, "*?")
	if p.s.Servers == nil {
		if exact && !toolRE.MatchString(name) {
			return &Error{Place: place, Reason: "not a tool name: 1 to 128 letters, digits, '_', '-' and '.'"}
		}
		return nil
	}
	if !exact {
		if p.globReachesNoServer(name) {
			p.warn(place, "matches no tool of any server (tools are named <server>"+p.s.NamespaceSeparator+"<tool>, servers "+strings.Join(p.s.ServerOrder, ", ")+")")
		}
		return nil
	}
	sep := p.s.NamespaceSeparator
	server, tool, ok := strings.Cut(name, sep)
	if _, known := p.s.Servers[server]; !ok || !known {
		return &Error{Place: place, Reason: "names no server: write <server>" + sep + "<tool> with one of " + strings.Join(p.s.ServerOrder, ", ")}
	}
	if !toolRE.MatchString(tool) {
		return &Error{Place: place, Reason: "not a tool name after " + `"` + server + sep + `"` + ": 1 to 128 letters, digits, '_', '-' and '.'"}
	}
	return nil
}

func (p *parser) quota(n *node) (*quota.Limits, error) {
	o, err := asObject(n, "perRun", "perMinute", "perHour", "perDay")
	if err != nil {
		return nil, err
	}
	if len(n.obj) == 0 {
		return nil, &Error{Place: n.place, Reason: "must set at least one of perRun, perMinute, perHour and perDay (or leave quota out)"}
	}
	l := &quota.Limits{}
	for _, f := range []struct {
		name string
		dst  *int
	}{{"perRun", &l.PerRun}, {"perMinute", &l.PerMinute}, {"perHour", &l.PerHour}, {"perDay", &l.PerDay}} {
		if v := o.get(f.name); v != nil {
			x, err := v.whole(1, MaxQuota)
			if err != nil {
				return nil, err
			}
			*f.dst = int(x)
		}
	}
	return l, nil
}

func (p *parser) redaction(n *node) error {
	o, err := asObject(n, "extend", "extendKeys", "replaceBuiltin")
	if err != nil {
		return err
	}
	r := &p.s.Redaction
	if v := o.get("extend"); v != nil {
		if r.Extend, err = v.texts(); err != nil {
			return err
		}
		for i, e := range r.Extend {
			if e == "" {
				return &Error{Place: indexPlace(v.place, i), Reason: "must not be empty"}
			}
			re, err := regexp.Compile(e)
			if err != nil {
				return &Error{Place: indexPlace(v.place, i), Reason: "not an RE2 expression (" + err.Error() + "); see https://github.com/google/re2/wiki/Syntax"}
			}
			if re.MatchString("") {
				return &Error{Place: indexPlace(v.place, i), Reason: "matches the empty text, so it finds nothing; make it match at least one character"}
			}
		}
	}
	if v := o.get("extendKeys"); v != nil {
		if r.ExtendKeys, err = v.texts(); err != nil {
			return err
		}
		seen := map[string]bool{}
		for i, k := range r.ExtendKeys {
			if k == "" {
				return &Error{Place: indexPlace(v.place, i), Reason: "must not be empty"}
			}
			if seen[strings.ToLower(k)] {
				return &Error{Place: indexPlace(v.place, i), Reason: "named twice (keys are compared without regard to case)"}
			}
			seen[strings.ToLower(k)] = true
		}
	}
	if r.ReplaceBuiltin, err = p.boolOr(o, "replaceBuiltin", false); err != nil {
		return err
	}
	if r.ReplaceBuiltin {
		if len(r.Extend) == 0 && len(r.ExtendKeys) == 0 {
			return &Error{Place: o.place("replaceBuiltin"), Reason: "with no extend and no extendKeys nothing would be redacted; give them, or remove replaceBuiltin"}
		}
		p.warn(o.place("replaceBuiltin"), "the built-in detectors of secrets (API keys, tokens, private keys, passwords) are off: only extend and extendKeys redact")
	}
	return nil
}

// Route splits a tool name as the client sees it into the server it goes to
// and the server's own name of the tool. With the single "server" form the
// server is "" and the name is kept. ok is false when the name begins with
// no server of "servers" and the separator.
func (s *Settings) Route(name string) (server, tool string, ok bool) {
	if s.Servers == nil {
		return "", name, true
	}
	server, tool, found := strings.Cut(name, s.NamespaceSeparator)
	if _, known := s.Servers[server]; !found || !known || tool == "" {
		return "", "", false
	}
	return server, tool, true
}

// Qualified is the name a client sees for a server's tool: the tool's own
// name with the single "server" form, <server><separator><tool> otherwise.
func (s *Settings) Qualified(server, tool string) string {
	if s.Servers == nil {
		return tool
	}
	return server + s.NamespaceSeparator + tool
}

// globReachesNoServer reports whether a glob rule can match no tool of any
// server: its literal beginning (before the first wildcard) agrees with no
// "<server><separator>".
func (p *parser) globReachesNoServer(pattern string) bool {
	lit := pattern[:strings.IndexAny(pattern, "*?")]
	for _, name := range p.s.ServerOrder {
		prefix := name + p.s.NamespaceSeparator
		if strings.HasPrefix(lit, prefix) || strings.HasPrefix(prefix, lit) {
			return false
		}
	}
	return true
}

// PolicyInUse lists the places of members read here that the call path
// must honour: "servers", "redaction", and each tool rule that is a glob,
// refuses or sets a quota. The engine honours all of them (sidecar/policy,
// sidecar/upstream); the list says what a start uses.
func (s *Settings) PolicyInUse() []string {
	var out []string
	if s.Servers != nil {
		out = append(out, "servers")
	}
	for _, name := range s.ToolOrder {
		t := s.Tools[name]
		place := childPlace("tools", name)
		switch {
		case strings.ContainsAny(name, "*?"):
			out = append(out, place)
		case t.Refuse:
			out = append(out, place+".refuse")
		case t.Quota != nil:
			out = append(out, place+".quota")
		}
	}
	if s.Redaction.ReplaceBuiltin || s.Redaction.Extend != nil || s.Redaction.ExtendKeys != nil {
		out = append(out, "redaction")
	}
	return out
}
