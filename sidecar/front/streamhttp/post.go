package streamhttp

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// CodeHeaderMismatch is the protocol's error for headers that do not agree
// with the body (or are missing or malformed).
const CodeHeaderMismatch = -32020

// Pointers into a request's params.
const (
	ptrMetaVersion  = "/_meta/io.modelcontextprotocol~1protocolVersion"
	ptrProgressTok  = "/_meta/progressToken"
	ptrName         = "/name"
	ptrURI          = "/uri"
	ptrCancelledReq = "/requestId"
)

// posted is one POST: the body's line and reading, and what its headers
// said.
type posted struct {
	line        []byte
	m           *wire.Message
	version     string // MCP-Protocol-Version; "" when absent
	metaVersion string // params._meta's protocol version; "" when absent
	jsonOK      bool   // Accept admits application/json
	sseOK       bool   // Accept admits text/event-stream
	tok         [sha256.Size]byte
}

// modern reports whether the request speaks 2026-07-28 or later.
func (p *posted) modern() bool {
	return p.version >= modernVersion || p.metaVersion >= modernVersion
}

// post serves a POST: the body is read and checked, then the request goes
// to its session (2025-11-25 and before) or to a pooled one (2026-07-28).
func (f *Front) post(w http.ResponseWriter, r *http.Request, tok [sha256.Size]byte) {
	ct, _, _ := readOne(r.Header, "Content-Type", true)
	if !jsonContentType(ct) {
		refuse(w, http.StatusUnsupportedMediaType, 0, "unsupported media type: a POST carries Content-Type application/json")
		return
	}
	acc, _, _ := readOne(r.Header, "Accept", true)
	p := &posted{tok: tok}
	p.jsonOK, p.sseOK = accepts(acc)
	if !p.jsonOK && !p.sseOK {
		refuse(w, http.StatusNotAcceptable, 0, "not acceptable: Accept must admit application/json or text/event-stream")
		return
	}
	if v, present, _ := readOne(r.Header, headerVersion, false); present {
		ver, err := parseVersion(v)
		if err != nil {
			refuse(w, http.StatusBadRequest, 0, "bad request: "+headerVersion+": "+err.Error())
			return
		}
		p.version = ver
	}
	body, status, why := f.readBody(w, r)
	if status != 0 {
		// What is left of the body is not read: the connection cannot carry another request.
		w.Header().Set("Connection", "close")
		if status == http.StatusRequestTimeout || status == http.StatusRequestEntityTooLarge {
			f.log.Warn("a request body is refused", slog.Int("status", status), slog.String("why", why))
		}
		refuse(w, status, wire.CodeInvalidRequest, why)
		return
	}
	m, err := wire.Inspect(body)
	if err != nil {
		var we *wire.Error
		if errors.As(err, &we) {
			f.log.Warn("a request body is not an acceptable message", slog.String("why", we.Reason))
			writeError(w, http.StatusBadRequest, we.ID, we.Code, we.Reason)
			return
		}
		writeError(w, http.StatusBadRequest, nil, wire.CodeInvalidRequest, "not an acceptable message")
		return
	}
	p.line, p.m = body, m
	if m.Params != nil && m.Kind != wire.KindResponse {
		if v, found, err := wire.Pointer(m.Params, ptrMetaVersion); err == nil && found {
			mv, err := jsonText(v)
			if err != nil {
				writeError(w, http.StatusBadRequest, m.ID, wire.CodeInvalidParams, "the _meta protocol version is not a string")
				return
			}
			p.metaVersion = mv
		}
	}
	_, hasSession, _ := readOne(r.Header, headerSession, false)
	discover := m.Kind == wire.KindRequest && m.Method == "server/discover" && !hasSession
	if p.modern() || discover {
		herr := modernHeaders(r.Header, p)
		if herr == nil {
			herr = f.params.check(r.Header, m)
		}
		if herr != nil {
			writeError(w, herr.status, m.ID, herr.code, herr.message)
			return
		}
		f.postModern(w, r, p)
		return
	}
	if herr := agreement(r.Header, m, false); herr != nil {
		writeError(w, herr.status, m.ID, herr.code, herr.message)
		return
	}
	f.postSession(w, r, p)
}

// readBody reads a POST's body within the body deadline and the line
// limit. A body is one line: a line feed may end it (and a carriage return
// before that), and none may be inside, since the line goes on to the tool
// server as one line. status is 0 when the body was read.
func (f *Front) readBody(w http.ResponseWriter, r *http.Request) (body []byte, status int, why string) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(f.o.BodyTimeout)) // not every writer has deadlines (tests); then none
	defer func() {
		// The deadline must not reach the stream that may follow: Go's
		// server reads on in the background to see the client leave.
		_ = rc.SetReadDeadline(time.Time{})
	}()
	body, err := readAllMax(http.MaxBytesReader(w, r.Body, wire.MaxLine+2))
	if err != nil {
		var mbe *http.MaxBytesError
		var ne net.Error
		switch {
		case errors.As(err, &mbe):
			return nil, http.StatusRequestEntityTooLarge, "the body is longer than 16 MiB"
		case errors.As(err, &ne) && ne.Timeout():
			return nil, http.StatusRequestTimeout, "the body did not arrive within the body deadline"
		default:
			return nil, http.StatusBadRequest, "the body could not be read"
		}
	}
	body = bytes.TrimSuffix(bytes.TrimSuffix(body, []byte("\n")), []byte("\r"))
	switch {
	case len(body) == 0:
		return nil, http.StatusBadRequest, "a POST carries one JSON-RPC message"
	case len(body) > wire.MaxLine:
		return nil, http.StatusRequestEntityTooLarge, "the body is longer than 16 MiB"
	case bytes.IndexByte(body, '\n') >= 0:
		return nil, http.StatusBadRequest, "the body is not one line: a line feed is inside it"
	}
	return body, 0, ""
}

// readAllMax reads r to its end with a buffer grown as the bytes come (a
// Content-Length is not trusted for the size).
func readAllMax(r interface{ Read([]byte) (int, error) }) ([]byte, error) {
	var buf bytes.Buffer
	_, err := buf.ReadFrom(r)
	return buf.Bytes(), err
}

// writeError answers with a JSON-RPC error body under the request's id.
func writeError(w http.ResponseWriter, status int, id []byte, code int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(errorBody(id, code, message)) // the client may be gone; nothing to do then
}

// modernHeaders checks a 2026-07-28 request's headers against its body:
// the protocol version in both, and Mcp-Method and Mcp-Name.
func modernHeaders(h http.Header, p *posted) *headerError {
	m := p.m
	if m.Kind == wire.KindRequest {
		switch {
		case p.version == "":
			return mismatch("the MCP-Protocol-Version header is required for a request naming its protocol version in _meta")
		case p.metaVersion == "" && m.Method != "server/discover":
			return &headerError{status: http.StatusBadRequest, code: wire.CodeInvalidParams,
				message: "the request names no protocol version in _meta (io.modelcontextprotocol/protocolVersion)"}
		case p.metaVersion != "" && p.version != p.metaVersion:
			return mismatch("the MCP-Protocol-Version header names another version than the body's _meta")
		}
	}
	return agreement(h, m, p.version >= modernVersion)
}

func mismatch(message string) *headerError {
	return &headerError{status: http.StatusBadRequest, code: CodeHeaderMismatch, message: "header mismatch: " + message}
}

// namedMethods are the methods whose name (or URI) Mcp-Name carries.
var namedMethods = map[string]string{"tools/call": ptrName, "prompts/get": ptrName, "resources/read": ptrURI}

// agreement checks Mcp-Method and Mcp-Name against the body: when
// required, both must be there (Mcp-Name for the methods that name
// something); when present, they must say what the body says, decoded as
// the engine decodes the body.
func agreement(h http.Header, m *wire.Message, required bool) *headerError {
	method, hasMethod, _ := readOne(h, headerMethod, false)
	name, hasName, _ := readOne(h, headerName, true)
	switch {
	case m.Kind == wire.KindResponse:
		if hasMethod || hasName {
			return mismatch("an answer carries no method or name")
		}
		return nil
	case !hasMethod && required:
		return mismatch("the Mcp-Method header is required")
	case hasMethod && method != m.Method:
		return mismatch("the Mcp-Method header names another method than the body")
	}
	ptr, named := namedMethods[m.Method]
	if !named || m.Kind != wire.KindRequest {
		if hasName {
			return mismatch("the Mcp-Name header is on a message that names nothing")
		}
		return nil
	}
	if !hasName {
		if required {
			return mismatch("the Mcp-Name header is required for " + m.Method)
		}
		return nil
	}
	headerValue, err := decodeName(name)
	if err != nil {
		return mismatch("the Mcp-Name header: " + err.Error())
	}
	var body string
	if m.Params != nil {
		if v, found, perr := wire.Pointer(m.Params, ptr); perr == nil && found {
			body, err = jsonText(v)
			if err != nil {
				return mismatch("the body's name cannot be compared: " + err.Error())
			}
		}
	}
	if headerValue != body {
		return mismatch("the Mcp-Name header names another " + what(ptr) + " than the body")
	}
	return nil
}

func what(ptr string) string {
	if ptr == ptrURI {
		return "resource"
	}
	return "name"
}

// errLoneSurrogate is a JSON string whose \u escapes are not UTF-16: two
// decoders may read it as two different texts.
var errLoneSurrogate = errors.New("its text has an unpaired surrogate escape")

// jsonText decodes a JSON string as the engine does (encoding/json),
// refusing what another decoder could read otherwise: a lone surrogate.
func jsonText(raw []byte) (string, error) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", errors.New("it is not a string")
	}
	if hasLoneSurrogate(raw) {
		return "", errLoneSurrogate
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", errors.New("it is not a string")
	}
	return s, nil
}

// hasLoneSurrogate reports whether a JSON string holds a \u escape of a
// surrogate that is not half of a high-low pair.
func hasLoneSurrogate(raw []byte) bool {
	for i := 0; i+1 < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		if raw[i+1] != 'u' {
			i++ // \" \\ and the like
			continue
		}
		r, ok := hex4At(raw, i+2)
		if !ok {
			return false // not JSON; json.Unmarshal refuses it
		}
		switch {
		case r >= 0xdc00 && r <= 0xdfff:
			return true
		case r >= 0xd800 && r <= 0xdbff:
			if i+11 >= len(raw) || raw[i+6] != '\\' || raw[i+7] != 'u' {
				return true
			}
			lo, ok := hex4At(raw, i+8)
			if !ok || lo < 0xdc00 || lo > 0xdfff {
				return true
			}
			i += 11
		default:
			i += 5
		}
	}
	return false
}

func hex4At(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[at : at+4] {
		var v byte
		switch {
		case c >= '0' && c <= '9':
			v = c - '0'
		case c >= 'a' && c <= 'f':
			v = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			v = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	return r, true
}

// idKey is one key for every spelling of a JSON-RPC id or progress token:
// a string by its text ("a" and "\u0061" are one id), anything else as
// written.
func idKey(raw []byte) string {
	if len(raw) > 0 && raw[0] == '"' {
		if s, err := jsonText(raw); err == nil {
			return "s" + s
		}
	}
	return "n" + string(raw)
}
