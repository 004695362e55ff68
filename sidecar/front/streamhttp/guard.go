package streamhttp

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// ParseListen reads serve's http:// listen address: a host (an IP address
// or localhost), a port, and the endpoint's path (default /mcp). Nothing
// else may be in it.
func ParseListen(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("%q is not a URL", s)
	}
	if u.Scheme != "http" || u.Opaque != "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return nil, fmt.Errorf("%q: want http://HOST:PORT/PATH (no TLS, user, query or fragment)", s)
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil || port == "" {
		return nil, fmt.Errorf("%q: want http://HOST:PORT/PATH with a port", s)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 || strconv.Itoa(n) != port {
		return nil, fmt.Errorf("%q: the port is not a number from 0 to 65535", s)
	}
	if host != "localhost" {
		if _, err := netip.ParseAddr(host); err != nil {
			return nil, fmt.Errorf("%q: the host must be an IP address or localhost", s)
		}
	}
	if u.Path == "" {
		u.Path = "/mcp"
	}
	if !strings.HasPrefix(u.Path, "/") || u.RawPath != "" || strings.Contains(u.Host+u.Path, "%") || strings.ContainsFunc(u.Path, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/-._~", r))
	}) {
		return nil, fmt.Errorf("%q: the path must be plain: letters, digits, / - . _ ~", s)
	}
	return u, nil
}

// loopbackHost reports whether host (no port) is a loopback name.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	return err == nil && a.IsLoopback()
}

// hostSet is the Host values a request may carry: the listen address's
// names with its port, and those the settings add.
type hostSet map[string]bool

// newHostSet lists the names of the listen address u, with allowed added
// (each HOST or HOST:PORT; a HOST alone takes the listen port).
func newHostSet(u *url.URL, port string, allowed []string) (hostSet, error) {
	hs := hostSet{}
	host := u.Hostname()
	add := func(h string) {
		if a, err := netip.ParseAddr(h); err == nil && a.Is6() {
			h = "[" + a.String() + "]"
		}
		hs[strings.ToLower(h)+":"+port] = true
		if port == "80" {
			hs[strings.ToLower(h)] = true
		}
	}
	if loopbackHost(host) {
		add("localhost")
		add("127.0.0.1")
		add("::1")
	}
	if a, err := netip.ParseAddr(host); err != nil || !a.IsUnspecified() {
		add(host)
	}
	for _, h := range allowed {
		hh, p, err := net.SplitHostPort(h)
		if err != nil {
			hh, p = h, port
		}
		if hh == "" || !visible(hh, false) || strings.ContainsAny(hh, "/@?#") {
			return nil, fmt.Errorf("allowed host %q is not a host name", h)
		}
		if p != port {
			hs[strings.ToLower(strings.Trim(hh, "[]"))+":"+p] = true
			continue
		}
		add(strings.Trim(hh, "[]"))
	}
	return hs, nil
}

// host reports whether a request's Host value is one of the set's.
func (hs hostSet) host(v string) bool {
	return hs[strings.ToLower(v)]
}

// origin reports whether an Origin value names one of the set's hosts over
// http. "null" (an opaque origin: a sandbox, a file) names none.
func (hs hostSet) origin(v string) bool {
	u, err := url.Parse(v)
	if err != nil || u.Scheme != "http" || u.Host == "" || u.Path != "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return false
	}
	if hs.host(u.Host) {
		return true
	}
	// An Origin without a port means port 80.
	_, _, err = net.SplitHostPort(u.Host)
	return err != nil && hs.host(u.Host+":80")
}

// Tokens are the bearer tokens that may reach the front, as their SHA-256.
type Tokens struct{ sums [][sha256.Size]byte }

// minTokenBytes is the shortest token taken.
const minTokenBytes = 16

// ParseTokens reads a token file: one bearer token per line (token68
// characters, at least 16), blank lines and lines starting with # skipped.
func ParseTokens(text []byte) (*Tokens, error) {
	ts := &Tokens{}
	for i, line := range bytes.Split(text, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(bytes.TrimSpace(line)) == 0 || line[0] == '#' {
			continue
		}
		if len(line) < minTokenBytes {
			return nil, fmt.Errorf("token file line %d: a token is at least %d characters", i+1, minTokenBytes)
		}
		for _, c := range line {
			if !token68(c) {
				return nil, fmt.Errorf("token file line %d: a token holds only A-Z a-z 0-9 - . _ ~ + / =", i+1)
			}
		}
		ts.sums = append(ts.sums, sha256.Sum256(line))
	}
	if len(ts.sums) == 0 {
		return nil, errors.New("the token file holds no token")
	}
	return ts, nil
}

func token68(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("-._~+/=", c) >= 0
}

// match returns the SHA-256 of tok when it is one of the set's. Every
// token is compared, each in constant time, whatever matched.
func (ts *Tokens) match(tok string) ([sha256.Size]byte, bool) {
	sum := sha256.Sum256([]byte(tok))
	found := 0
	for _, t := range ts.sums {
		found |= subtle.ConstantTimeCompare(sum[:], t[:])
	}
	return sum, found == 1
}

// refusal is an HTTP answer of the front's own with a JSON-RPC error body
// (id null) when code is set.
func refuse(w http.ResponseWriter, status, code int, message string) {
	h := w.Header()
	if code == 0 {
		h.Set("Content-Type", "text/plain; charset=utf-8")
		h.Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(message + "\n")) // the client may be gone; nothing to do then
		return
	}
	h.Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(errorBody(nil, code, message)) // the client may be gone; nothing to do then
}
