package streamhttp

import (
	"encoding/base64"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The headers of the protocol, in their canonical spelling.
const (
	headerSession     = "Mcp-Session-Id"
	headerVersion     = "Mcp-Protocol-Version"
	headerMethod      = "Mcp-Method"
	headerName        = "Mcp-Name"
	headerLastEventID = "Last-Event-Id"
	headerParamPrefix = "Mcp-Param-"
)

// readHeaders are the request headers the front reads. Each may appear at
// most once: two readers of a request that take the first and the last of
// two values must never see different requests.
var readHeaders = []string{"Authorization", "Origin", "Content-Type", "Accept",
	headerSession, headerVersion, headerMethod, headerName, headerLastEventID}

// knownVersions are the protocol versions before 2026-07-28 a request may
// name; from 2026-07-28 on, any well-formed date is passed to the server,
// which answers one it does not know with UnsupportedProtocolVersion.
var knownVersions = map[string]bool{"2024-11-05": true, "2025-03-26": true, "2025-06-18": true, "2025-11-25": true}

// modernVersion is the first revision without sessions.
const modernVersion = "2026-07-28"

// headerError is a request header the front does not take; the request is
// answered with status and the message (which never holds a header value).
type headerError struct {
	status  int
	code    int // JSON-RPC code of the error body; 0: a plain-text body
	message string
}

func (e *headerError) Error() string { return e.message }

func badHeader(format string, args ...any) *headerError {
	return &headerError{status: http.StatusBadRequest, message: fmt.Sprintf(format, args...)}
}

// checkHeaderNames refuses a request with a header spelled so that another
// reader could take it for one the front reads: Mcp_Session_Id (a proxy
// that maps '_' to '-'), or a second spelling Go did not fold into the same
// key. Go's server joins names equal under ASCII case into one key, and
// readOne refuses two values.
func checkHeaderNames(h http.Header) error {
	for name := range h {
		folded := strings.ReplaceAll(strings.ToLower(name), "_", "-")
		for _, ours := range readHeaders {
			if folded == strings.ToLower(ours) && name != http.CanonicalHeaderKey(ours) {
				return badHeader("header %q is spelled otherwise than %s", cutName(name), ours)
			}
		}
		if strings.HasPrefix(folded, "mcp-") && strings.ContainsRune(name, '_') {
			return badHeader("header %q has an underscore where the protocol's headers have a hyphen", cutName(name))
		}
	}
	return nil
}

// cutName is a header name fit to quote in a message: at most 64 bytes of
// visible ASCII.
func cutName(name string) string {
	var b strings.Builder
	for i := 0; i < len(name) && b.Len() < 64; i++ {
		c := name[i]
		if c < 0x21 || c > 0x7e {
			c = '?'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// readOne returns the one value of header name. present is false when the
// request has none. A second value, or a value with a byte outside visible
// ASCII (space and tab allowed inside when inner), is an error.
func readOne(h http.Header, name string, inner bool) (value string, present bool, err error) {
	vs := h.Values(name)
	switch len(vs) {
	case 0:
		return "", false, nil
	case 1:
	default:
		return "", true, badHeader("header %s appears %d times; it may appear once", name, len(vs))
	}
	if !visible(vs[0], inner) {
		return "", true, badHeader("header %s holds a byte outside visible ASCII", name)
	}
	return vs[0], true, nil
}

// visible reports whether s is visible ASCII (0x21-0x7e); with inner,
// spaces and tabs are allowed between visible bytes.
func visible(s string, inner bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x21 && c <= 0x7e {
			continue
		}
		if inner && (c == ' ' || c == '\t') && i > 0 && i < len(s)-1 {
			continue
		}
		return false
	}
	return true
}

// parseVersion reads a protocol version: a date YYYY-MM-DD that is one of
// the known versions before 2026-07-28, or any date from then on.
func parseVersion(v string) (string, error) {
	if len(v) != 10 || v[4] != '-' || v[7] != '-' {
		return "", errors.New("not a protocol version (YYYY-MM-DD)")
	}
	for i, c := range []byte(v) {
		if i == 4 || i == 7 {
			continue
		}
		if c < '0' || c > '9' {
			return "", errors.New("not a protocol version (YYYY-MM-DD)")
		}
	}
	if v < modernVersion && !knownVersions[v] {
		return "", fmt.Errorf("protocol version %s is not supported (supported: 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, and 2026-07-28 on)", v)
	}
	return v, nil
}

// The sentinel of a base64-encoded header value (Mcp-Name, Mcp-Param-*).
const (
	base64Prefix = "=?base64?"
	base64Suffix = "?="
)

// decodeName reads an Mcp-Name value: as written, or the UTF-8 text inside
// the base64 sentinel (standard alphabet, padded, nothing else accepted).
func decodeName(v string) (string, error) {
	inner, ok := strings.CutPrefix(v, base64Prefix)
	if !ok {
		return v, nil
	}
	inner, ok = strings.CutSuffix(inner, base64Suffix)
	if !ok {
		return v, nil
	}
	// The decoder passes over CR and LF even when strict: nothing but the
	// alphabet is taken.
	if strings.ContainsFunc(inner, func(r rune) bool {
		return !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '+' || r == '/' || r == '=')
	}) {
		return "", errors.New("its base64 holds a byte outside the alphabet")
	}
	b, err := base64.StdEncoding.Strict().DecodeString(inner)
	if err != nil {
		return "", errors.New("its base64 does not read")
	}
	if !utf8.Valid(b) {
		return "", errors.New("its base64 is not UTF-8 text")
	}
	return string(b), nil
}

// eventID is an event's place: its stream and its index on it.
type eventID struct {
	stream uint64
	idx    uint64
}

func (id eventID) String() string {
	return strconv.FormatUint(id.stream, 10) + "-" + strconv.FormatUint(id.idx, 10)
}

// maxEventPart bounds the numbers of an event id (ten digits).
const maxEventPart = 9_999_999_999

// parseEventID reads a Last-Event-ID: two decimal numbers joined by '-',
// without signs, spaces or leading zeros.
func parseEventID(s string) (eventID, error) {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return eventID{}, errors.New("not an event id of this executor")
	}
	st, ok1 := decimal(a)
	ix, ok2 := decimal(b)
	if !ok1 || !ok2 {
		return eventID{}, errors.New("not an event id of this executor")
	}
	return eventID{stream: st, idx: ix}, nil
}

func decimal(s string) (uint64, bool) {
	if s == "" || len(s) > 10 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	var n uint64
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, n <= maxEventPart
}

// accepts reads an Accept value: whether it admits a JSON body and an event
// stream. Parameters are ignored; */* and type/* count.
func accepts(v string) (jsonOK, streamOK bool) {
	for _, part := range strings.Split(v, ",") {
		base, _, _ := strings.Cut(part, ";")
		switch strings.ToLower(strings.TrimSpace(base)) {
		case "application/json", "application/*":
			jsonOK = true
		case "text/event-stream", "text/*":
			streamOK = true
		case "*/*":
			jsonOK, streamOK = true, true
		}
	}
	return jsonOK, streamOK
}

// jsonContentType reports whether a Content-Type names application/json
// (in any case, with a charset of utf-8 or none).
func jsonContentType(v string) bool {
	mt, params, err := mime.ParseMediaType(v)
	if err != nil || mt != "application/json" {
		return false
	}
	for k, p := range params {
		if k != "charset" || !strings.EqualFold(p, "utf-8") {
			return false
		}
	}
	return true
}

// bearer reads an Authorization header of the Bearer scheme.
func bearer(h http.Header) (token string, present bool, err error) {
	v, present, err := readOne(h, "Authorization", true)
	if err != nil || !present {
		return "", present, err
	}
	scheme, tok, ok := strings.Cut(v, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" || !visible(tok, false) {
		return "", true, errors.New("the Authorization header is not a bearer token")
	}
	return tok, true, nil
}
