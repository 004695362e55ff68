package record

import (
	"strings"
	"unicode/utf8"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
)

// MaxRecordSize is the largest record: the lengths of "payload" and of every
// text in the signature entries (and their "header"), added up (§3.1).
const MaxRecordSize = 65536

// Problem codes of the envelope.
const (
	CodeBadEnvelope      = "bad-envelope"
	CodeTooLarge         = "too-large"
	CodeBadBase64url     = "bad-base64url"
	CodeUnknownType      = "unknown-type"
	CodeTypeMismatch     = "payload-type-mismatch"
	CodeBadLayout        = "bad-signatures-layout"
	CodeNotCanonical     = "payload-not-canonical"
	CodeBadField         = "bad-field"
	CodeSignatureInvalid = "signature-invalid"
)

// PasskeyHeader is the unprotected "header" of a passkey signature: the
// values the authenticator returned, in base64url as stored. The envelope
// check confirms only its two members; a member that is not text is kept as
// "" here (the passkey check then refuses it with passkey-bad-data) and the
// stored value is kept for Record.Value.
type PasskeyHeader struct {
	AuthenticatorData, ClientDataJSON string

	stored map[string]any // the header object exactly as read, when read by Parse
}

// IsText reports whether both values were text as stored. A header built
// in code (not read by Parse) holds text by construction. A value that is
// not text fails the passkey check's first step (passkey-bad-data), as the
// reference's base64url decoding of a non-text value does.
func (h *PasskeyHeader) IsText() bool {
	if h == nil {
		return false
	}
	if h.stored == nil {
		return true
	}
	_, ok1 := h.stored["authenticatorData"].(string)
	_, ok2 := h.stored["clientDataJSON"].(string)
	return ok1 && ok2
}

// Signature is one entry of "signatures".
type Signature struct {
	Protected string         // b64u as stored
	Alg       string         // from the known protected header
	Header    *PasskeyHeader // passkey kinds only
	Signature string         // b64u as stored

	sig []byte // decoded Signature, when read by Parse
}

// Bytes returns the decoded signature.
func (s *Signature) Bytes() ([]byte, error) {
	if s.sig != nil {
		return s.sig, nil
	}
	return canon.UnB64(s.Signature)
}

// Record is a record whose envelope, labels and canonical content have been
// confirmed. No signature has been checked.
type Record struct {
	Kind        Kind
	Payload     string         // b64u as stored
	Content     map[string]any // parsed canonical content
	ContentText []byte         // decoded payload bytes, exactly as signed
	Fingerprint string         // Fingerprint(ContentText)
	Signatures  []Signature
}

// SigningInput returns the bytes signature i covers (RFC 7515 §5.1):
// ASCII(protected) "." ASCII(payload).
func (r *Record) SigningInput(i int) []byte {
	return signingInput(r.Signatures[i].Protected, r.Payload)
}

// AppendSigningInput appends the bytes signature i covers to dst.
func (r *Record) AppendSigningInput(dst []byte, i int) []byte {
	dst = append(dst, r.Signatures[i].Protected...)
	dst = append(dst, '.')
	return append(dst, r.Payload...)
}

// Value returns the envelope as a canonical value, for a book line. For a
// record read by Parse it is equal to the value that was read.
func (r *Record) Value() map[string]any {
	sigs := make([]any, len(r.Signatures))
	for i, s := range r.Signatures {
		entry := map[string]any{"protected": s.Protected, "signature": s.Signature}
		if s.Header != nil {
			if s.Header.stored != nil {
				entry["header"] = s.Header.stored
			} else {
				entry["header"] = map[string]any{
					"authenticatorData": s.Header.AuthenticatorData,
					"clientDataJSON":    s.Header.ClientDataJSON,
				}
			}
		}
		sigs[i] = entry
	}
	return map[string]any{"payload": r.Payload, "signatures": sigs}
}

// Parse reads v (a record as a JSON value: map[string]any, []any, string,
// numbers) as a record of the given kind and confirms its envelope, its
// labels and the canonical form of its content, in the reference's order of
// checks (jws.js parseRecord). It checks no signature and no member of the
// content other than "type".
func Parse(v any, kind Kind) (*Record, error) { return parse(v, kind, true) }

// ParseDeferred is Parse without decoding the signatures: each is decoded
// when Signature.Bytes asks for it, and a signature that is not strict
// base64url fails there instead of here. It is for a record whose
// signatures are not checked because they were checked before (a book's
// lines that a checkpoint covers, whose top fingerprint then confirms
// every byte of them).
func ParseDeferred(v any, kind Kind) (*Record, error) { return parse(v, kind, false) }

func parse(v any, kind Kind, decode bool) (*Record, error) {
	info, ok := kinds[kind]
	if !ok {
		return nil, problem.New(problem.CheckFailed, "%q is not a kind of record", string(kind))
	}
	env, err := exactMembers(v, "a record", "payload", "signatures")
	if err != nil {
		return nil, err
	}
	payload, ok := env["payload"].(string)
	if !ok {
		return nil, problem.New(CodeBadEnvelope, `"payload" must be text`)
	}
	entries, ok := env["signatures"].([]any)
	if !ok {
		return nil, problem.New(CodeBadEnvelope, `"signatures" must be a list`)
	}

	// The size is measured before anything is decoded.
	if sizeOver(v, MaxRecordSize) {
		return nil, problem.New(CodeTooLarge, "the record is larger than 65,536")
	}

	// Labels first: what kind of record does each signature say this is?
	entryMembers := []string{"protected", "signature"}
	if info.passkey {
		entryMembers = []string{"header", "protected", "signature"}
	}
	sigs := make([]Signature, 0, len(entries))
	for _, e := range entries {
		s, err := parseSignature(e, kind, info, entryMembers, decode)
		if err != nil {
			return nil, err
		}
		sigs = append(sigs, s)
	}
	if len(sigs) != len(info.headers) {
		return nil, layoutError(kind, info)
	}
	for i, s := range sigs {
		if s.Protected != info.headers[i].b64 {
			return nil, layoutError(kind, info)
		}
	}

	text, content, err := parseContent(payload, kind, info)
	if err != nil {
		return nil, err
	}
	return &Record{
		Kind:        kind,
		Payload:     payload,
		Content:     content,
		ContentText: text,
		Fingerprint: canon.Fingerprint(text),
		Signatures:  sigs,
	}, nil
}

// parseSignature reads one entry of "signatures": its exact members, a known label of the kind expected,
// the signature bytes and, for a passkey kind, the WebAuthn header.
func parseSignature(e any, kind Kind, info *kindInfo, entryMembers []string, decode bool) (Signature, error) {
	entry, err := exactMembers(e, "a signature entry", entryMembers...)
	if err != nil {
		return Signature{}, err
	}
	protected, ok1 := entry["protected"].(string)
	signature, ok2 := entry["signature"].(string)
	if !ok1 || !ok2 {
		return Signature{}, problem.New(CodeBadEnvelope, `"protected" and "signature" must be text`)
	}
	raw, err := canon.UnB64(protected)
	if err != nil {
		return Signature{}, err
	}
	if !utf8.Valid(raw) {
		return Signature{}, problem.New(CodeUnknownType, "a protected header is not UTF-8 text")
	}
	h, known := knownHeaders[string(raw)]
	if !known {
		return Signature{}, problem.New(CodeUnknownType, "a signature carries a label that is not one of the known labels")
	}
	if h.kind != kind {
		return Signature{}, problem.New(CodeTypeMismatch, "a signature is labelled as a %s, but a %s is expected here", h.kind, kind)
	}
	var sig []byte
	if decode {
		if sig, err = canon.UnB64(signature); err != nil {
			return Signature{}, err
		}
	}
	s := Signature{Protected: protected, Alg: h.alg, Signature: signature, sig: sig}
	if info.passkey {
		hdr, err := exactMembers(entry["header"], `the "header" of a passkey signature`, "authenticatorData", "clientDataJSON")
		if err != nil {
			return Signature{}, err
		}
		ad, _ := hdr["authenticatorData"].(string)
		cd, _ := hdr["clientDataJSON"].(string)
		stored := map[string]any{"authenticatorData": hdr["authenticatorData"], "clientDataJSON": hdr["clientDataJSON"]}
		s.Header = &PasskeyHeader{AuthenticatorData: ad, ClientDataJSON: cd, stored: stored}
	}
	return s, nil
}

// parseContent reads the payload: base64url of canonical UTF-8 JSON, an object whose "type" is the
// kind's content type.
func parseContent(payload string, kind Kind, info *kindInfo) ([]byte, map[string]any, error) {
	text, err := canon.UnB64(payload)
	if err != nil {
		return nil, nil, err
	}
	if !utf8.Valid(text) {
		return nil, nil, problem.New(CodeNotCanonical, "the content is not UTF-8 text")
	}
	parsed, err := canon.Parse(text)
	if err != nil {
		return nil, nil, err
	}
	content, ok := parsed.(map[string]any)
	if !ok {
		return nil, nil, problem.New(CodeBadField, "the content must be an object")
	}
	if t, _ := content["type"].(string); t != info.contentType {
		// Nothing from the content goes into the message: it is untrusted.
		return nil, nil, problem.New(CodeTypeMismatch, "the content does not say it is a %s, which is what is expected here", kind)
	}
	return text, content, nil
}

func layoutError(kind Kind, info *kindInfo) error {
	switch {
	case info.passkey:
		return problem.New(CodeBadLayout, "a %s carries exactly one signature", kind)
	case kind == Seal:
		return problem.New(CodeBadLayout, "a seal carries exactly three signatures: Ed25519, ML-DSA-87, then SLH-DSA-SHA2-256s")
	default:
		return problem.New(CodeBadLayout, "a %s carries exactly two signatures: Ed25519, then ML-DSA-87", kind)
	}
}

// exactMembers confirms that v is an object holding exactly names.
func exactMembers(v any, what string, names ...string) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok || m == nil {
		return nil, problem.New(CodeBadEnvelope, "%s must be an object", what)
	}
	if len(m) != len(names) {
		return nil, problem.New(CodeBadEnvelope, "%s must hold exactly: %s", what, strings.Join(names, ", "))
	}
	for _, n := range names {
		if _, ok := m[n]; !ok {
			return nil, problem.New(CodeBadEnvelope, "%s must hold exactly: %s", what, strings.Join(names, ", "))
		}
	}
	return m, nil
}

// Size is the size of a record as §3.1 measures it: the length of its
// "payload" and of every text value in its signature entries and their
// "header", added up, in UTF-16 code units as the reference counts. It does
// not depend on how the JSON around them is written.
func Size(v any) int { return size(v, utf16Len) }

// sizeOver reports whether v's Size is over limit. A text is never more
// UTF-16 code units than UTF-8 bytes, so most records are settled by their
// byte lengths alone, without reading their texts.
func sizeOver(v any, limit int) bool {
	if size(v, func(s string) int { return len(s) }) <= limit {
		return false
	}
	return Size(v) > limit
}

func size(v any, length func(string) int) int {
	env, ok := v.(map[string]any)
	if !ok {
		return 0
	}
	size := 0
	if p, ok := env["payload"].(string); ok {
		size += length(p)
	}
	entries, ok := env["signatures"].([]any)
	if !ok {
		return size
	}
	for _, e := range entries {
		size += textLengths(e, length)
		if m, ok := e.(map[string]any); ok {
			switch h := m["header"].(type) {
			case map[string]any, []any:
				size += textLengths(h, length)
			}
		}
	}
	return size
}

// textLengths adds up the lengths of the text values directly inside an
// object or a list (JavaScript's Object.values).
func textLengths(v any, length func(string) int) int {
	n := 0
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			if s, ok := e.(string); ok {
				n += length(s)
			}
		}
	case []any:
		for _, e := range x {
			if s, ok := e.(string); ok {
				n += length(s)
			}
		}
	}
	return n
}

// utf16Len is the length of s in UTF-16 code units (JavaScript's length).
func utf16Len(s string) int {
	n := 0
	// Eight ASCII bytes at a time (an ASCII byte is one code unit).
	for n+8 <= len(s) && (uint64(s[n])|uint64(s[n+1])<<8|uint64(s[n+2])<<16|uint64(s[n+3])<<24|
		uint64(s[n+4])<<32|uint64(s[n+5])<<40|uint64(s[n+6])<<48|uint64(s[n+7])<<56)&0x8080808080808080 == 0 {
		n += 8
	}
	for i := n; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			// Slow path from the first non-ASCII byte on.
			for _, r := range s[i:] {
				if r > 0xFFFF {
					n += 2
				} else {
					n++
				}
			}
			return n
		}
		n++
	}
	return n
}
