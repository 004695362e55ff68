package passkey

import (
	"strconv"
	"strings"

	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
)

// The messages of the origin rule. Codes are the format's ("bad-field");
// the wording is ours.
const (
	msgOriginText   = "issuer.origin: must be text of 1 to 300 characters"
	msgRPID         = "issuer.rpId: must be a website name in lower case, such as example.org"
	msgOriginForm   = "issuer.origin: must be the address of a page: https://, a website name in lower case, a port only if it is needed, and nothing more, such as https://sign.example.org"
	msgOriginScheme = "issuer.origin: must begin https://, or http://localhost"
	msgOriginSite   = "issuer.origin: must be on the website that issuer.rpId names"
)

// CheckOrigin applies the format's exact rule to a slip's issuer.origin and
// issuer.rpId (format description, section 4.1), in the reference's order:
// the origin's length, then the rpId's form, then the origin's form, its
// scheme, and that its host lies on the rpId's website. Any fault is a
// *problem.Error with code "bad-field".
//
// The rule needs no URL parser: "https://" (or "http://" for the host
// "localhost" alone), a host of lower-case labels of letters, digits and
// hyphens (none beginning or ending with a hyphen, the last not all digits,
// "xn--" labels taken as they are), a port only when it is not the scheme's
// own, and nothing more.
func CheckOrigin(origin, rpID string) error {
	if n := codePoints(origin); n < 1 || n > 300 {
		return problem.New("bad-field", msgOriginText)
	}
	if !isRPID(rpID) {
		return problem.New("bad-field", msgRPID)
	}
	scheme, host, ok := splitOrigin(origin)
	if !ok {
		return problem.New("bad-field", msgOriginForm)
	}
	if !(scheme == "https" || (scheme == "http" && host == "localhost")) {
		return problem.New("bad-field", msgOriginScheme)
	}
	if !(host == rpID || strings.HasSuffix(host, "."+rpID)) {
		return problem.New("bad-field", msgOriginSite)
	}
	return nil
}

// splitOrigin matches (https|http)://HOST(:PORT)? exactly and checks the
// host's labels and the port. It reports the scheme and the host.
func splitOrigin(origin string) (scheme, host string, ok bool) {
	switch {
	case strings.HasPrefix(origin, "https://"):
		scheme = "https"
	case strings.HasPrefix(origin, "http://"):
		scheme = "http"
	default:
		return "", "", false
	}
	rest := origin[len(scheme)+3:]
	port := ""
	if i := strings.IndexByte(rest, ':'); i >= 0 {
		host, port = rest[:i], rest[i+1:]
		if !validPort(scheme, port) {
			return "", "", false
		}
	} else {
		host = rest
	}
	if len(host) < 1 || len(host) > 253 {
		return "", "", false
	}
	labels := strings.Split(host, ".")
	for _, l := range labels {
		if !isLabel(l) {
			return "", "", false
		}
	}
	if allDigits(labels[len(labels)-1]) {
		return "", "", false
	}
	return scheme, host, true
}

// validPort: [1-9][0-9]{0,4}, at most 65535, and not the scheme's own.
func validPort(scheme, port string) bool {
	if len(port) < 1 || len(port) > 5 || port[0] < '1' || port[0] > '9' || !allDigits(port) {
		return false
	}
	n, err := strconv.Atoi(port)
	if err != nil || n > 65535 {
		return false
	}
	if (scheme == "https" && n == 443) || (scheme == "http" && n == 80) {
		return false
	}
	return true
}

// isLabel: [a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?
func isLabel(l string) bool {
	if len(l) < 1 || len(l) > 63 {
		return false
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if isLowerAlnum(c) {
			continue
		}
		if c == '-' && i != 0 && i != len(l)-1 {
			continue
		}
		return false
	}
	return true
}

// isRPID: [a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?
func isRPID(s string) bool {
	if len(s) < 1 || len(s) > 253 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isLowerAlnum(c) {
			continue
		}
		if (c == '-' || c == '.') && i != 0 && i != len(s)-1 {
			continue
		}
		return false
	}
	return true
}

func isLowerAlnum(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') }

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// codePoints counts Unicode code points, as the format counts text length.
func codePoints(s string) int {
	n := 0
	for range s {
		n++
	}
	return n
}
