package stamp

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/sha1" //nolint:gosec // RFC 2634's ESSCertID names a certificate by SHA-1; the format reads it
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"hash"
	"math/big"
	"math/bits"
	"slices"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/der"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
)

// Problem codes of a time-stamp.
const (
	CodeBadData   = der.CodeBadData
	CodeWrongData = "stamp-wrong-data"
	CodeInvalid   = "stamp-invalid"
)

// MaxTokenBytes is the largest time-stamp the format accepts.
const MaxTokenBytes = 12288

// MaxAccuracySeconds is the loosest a time-stamp may state its own time.
const MaxAccuracySeconds = 300

// States of a checked time-stamp.
const (
	StateValid       = "valid"       // signed by a service the checker trusts
	StateUntrusted   = "untrusted"   // signed soundly, by a service the checker did not name
	StateUnavailable = "unavailable" // this build cannot check the signing method; no time
)

// Methods a caller may treat as not built in (Options.Without).
const (
	MethodRSA     = "RSA"
	MethodECDSA   = "ECDSA"
	MethodEd25519 = "Ed25519"
)

// Options are the checker's choices.
type Options struct {
	// Trusted are the SHA-256 fingerprints (base64url) of the certificates
	// of the services the person checking trusts.
	Trusted []string
	// Without names methods ("RSA", "ECDSA", "Ed25519") to treat as not
	// built in, for tests of how a check behaves without them.
	Without []string
}

// Result is what a sound time-stamp states.
type Result struct {
	State string `json:"state"`
	// When is the stated time to the second, rounded down; "" when
	// unavailable.
	When string `json:"when"`
	// Time is the stated time in milliseconds since 1970, its fraction
	// kept; 0 when unavailable.
	Time int64 `json:"time"`
	// Authority is the fingerprint of the certificate that signed; "" when
	// unavailable.
	Authority string `json:"authority"`
}

// At is the stated time.
func (r Result) At() time.Time { return time.UnixMilli(r.Time).UTC() }

// Object identifiers, as the hexadecimal of their DER content.
const (
	oidSignedData         = "2a864886f70d010702"
	oidTSTInfo            = "2a864886f70d0109100104"
	oidContentType        = "2a864886f70d010903"
	oidMessageDigest      = "2a864886f70d010904"
	oidSigningCert        = "2a864886f70d010910020c"
	oidSigningCertV2      = "2a864886f70d010910022f"
	oidSHA256             = "608648016503040201"
	oidSHA384             = "608648016503040202"
	oidSHA512             = "608648016503040203"
	oidRSAEncryption      = "2a864886f70d010101"
	oidSHA256WithRSA      = "2a864886f70d01010b"
	oidSHA384WithRSA      = "2a864886f70d01010c"
	oidSHA512WithRSA      = "2a864886f70d01010d"
	oidECDSAWithSHA256    = "2a8648ce3d040302"
	oidECDSAWithSHA384    = "2a8648ce3d040303"
	oidECDSAWithSHA512    = "2a8648ce3d040304"
	oidECPublicKey        = "2a8648ce3d0201"
	oidP256               = "2a8648ce3d030107"
	oidP384               = "2b81040022"
	oidEd25519            = "2b6570"
	hashSHA1              = "SHA-1"
	hashSHA256            = "SHA-256"
	hashSHA384            = "SHA-384"
	hashSHA512            = "SHA-512"
	kindNotAccepted       = "A time-stamp was signed with a kind of key that is not accepted: RSA, ECDSA on the curves P-256 and P-384, and Ed25519 are."
	wrongData             = "A time-stamp was made for something else."
	signatureDoesNotFit   = "A time-stamp's signature does not fit the certificate it names."
	statementNotCovered   = "A time-stamp's signature does not cover its statement."
	keyEncodingWrong      = "the public key of a certificate is not written as its standard sets out."
	rsaKeyNotAccepted     = "A time-stamp was signed with an RSA key whose size or public number is not accepted."
	weakEd25519           = "A time-stamp was signed with an Ed25519 key under which anyone can sign, which is not accepted."
	certDatesDoNotHold    = "A time-stamp is dated outside the time its service's certificate was in force."
	criticalNotKnown      = "A time-stamp carries an extension that it says must be understood, and this checker does not understand it."
	accuracyTooLoose      = "A time-stamp states its time too loosely: to no better than more than 300 seconds."
	noCertificate         = "A time-stamp carries no certificate to check it with."
	certificateNotCarried = "A time-stamp does not carry the certificate it says signed it."
)

var hashes = map[string]string{oidSHA256: hashSHA256, oidSHA384: hashSHA384, oidSHA512: hashSHA512}
var rsaWith = map[string]string{oidSHA256WithRSA: hashSHA256, oidSHA384WithRSA: hashSHA384, oidSHA512WithRSA: hashSHA512}
var ecdsaWith = map[string]string{oidECDSAWithSHA256: hashSHA256, oidECDSAWithSHA384: hashSHA384, oidECDSAWithSHA512: hashSHA512}

func digest(name string, b []byte) []byte {
	var h hash.Hash
	switch name {
	case hashSHA1:
		h = sha1.New() //nolint:gosec // see the import
	case hashSHA256:
		h = sha256.New()
	case hashSHA384:
		h = sha512.New384()
	case hashSHA512:
		h = sha512.New()
	default:
		return nil
	}
	h.Write(b)
	return h.Sum(nil)
}

// refusal carries a refusal up through the reader (see reader.fail); Check
// turns it back into the error.
type refusal struct{ err error }

// reader reads one token, failing by panic with a refusal, which Check
// recovers: the reference reads the same way, by throwing.
type reader struct{ b []byte }

func (r *reader) fail(err error) { panic(refusal{err}) }

func (r *reader) bad(why string) { r.fail(der.Bad(why)) }

func invalid(why string) error { return problem.New(CodeInvalid, "%s", why) }

func (r *reader) must(err error) {
	if err != nil {
		r.fail(err)
	}
}

func (r *reader) read(at, end int) der.Element {
	e, err := der.Read(r.b, at, end)
	r.must(err)
	return e
}

func (r *reader) children(e der.Element, most int) []der.Element {
	c, err := der.Children(r.b, e, most)
	r.must(err)
	return c
}

func (r *reader) expect(e *der.Element, tag byte, what string) der.Element {
	out, err := der.Expect(e, tag, what)
	r.must(err)
	return out
}

func (r *reader) hex(e der.Element) string     { return der.Hex(r.b, e) }
func (r *reader) content(e der.Element) []byte { return der.Content(r.b, e) }
func (r *reader) whole(e der.Element) []byte   { return der.Whole(r.b, e) }

// algorithm reads an AlgorithmIdentifier: a sequence that begins with an
// object identifier, and its parameters if any.
func (r *reader) algorithm(e *der.Element, what string) (string, *der.Element) {
	seq := r.expect(e, der.Sequence, what)
	parts := r.children(seq, 2)
	oid := r.hex(r.expect(der.At(parts, 0), der.OID, what))
	return oid, der.At(parts, 1)
}

func (r *reader) time(e der.Element) int64 {
	ms, err := der.Time(r.b, e)
	r.must(err)
	return ms
}

// statement is what the service signed (RFC 3161 section 2.4.2, TSTInfo).
type statement struct {
	hash            string
	stamped         []byte
	time            int64
	accuracySeconds int64
	critical        bool
	nonce           []byte // nil when absent
}

func readStatement(b []byte) statement {
	r := &reader{b: b}
	outer := r.expect(ptr(r.read(0, len(b))), der.Sequence, "the statement")
	if outer.End != len(b) {
		r.bad("the statement has bytes left over.")
	}
	r.must(der.Validate(b, outer))
	parts := r.children(outer, 10)
	version := r.expect(der.At(parts, 0), der.Integer, "the version of the statement")
	if r.hex(version) != "01" {
		r.bad("the statement is of a version other than 1.")
	}
	r.expect(der.At(parts, 1), der.OID, "the policy")
	imprintSeq := r.expect(der.At(parts, 2), der.Sequence, "the fingerprint that was stamped")
	imprint := r.children(imprintSeq, 2)
	h, _ := r.algorithm(der.At(imprint, 0), "the fingerprint method")
	stamped := r.content(r.expect(der.At(imprint, 1), der.OctetString, "the fingerprint that was stamped"))
	r.expect(der.At(parts, 3), der.Integer, "the serial number")
	t := r.time(r.expect(der.At(parts, 4), der.GeneralizedTime, "the time"))
	s := statement{hash: h, stamped: stamped, time: t}

	// What may follow, each at most once and in this order: how exact the
	// time is, whether stamps are strictly ordered, a nonce, the service's
	// name, and extensions.
	i := 5
	if p := der.At(parts, i); p != nil && p.Tag == der.Sequence {
		for _, a := range r.children(*p, 3) {
			switch {
			case a.Tag == der.Integer:
				digits := r.content(a)
				if len(digits) > 4 || digits[0]&0x80 != 0 {
					r.bad("the statement says how exact its time is in a way that cannot be read.")
				}
				var n int64
				for _, d := range digits {
					n = n*256 + int64(d)
				}
				s.accuracySeconds = n
			case a.Tag != 0x80 && a.Tag != 0x81:
				r.bad("the statement says how exact its time is in a way that cannot be read.")
			}
		}
		i++
	}
	if p := der.At(parts, i); p != nil && p.Tag == der.Boolean {
		i++
	}
	if p := der.At(parts, i); p != nil && p.Tag == der.Integer {
		s.nonce = slices.Clone(r.content(*p))
		i++
	}
	if p := der.At(parts, i); p != nil && p.Tag == der.Context0 {
		i++
	}
	if p := der.At(parts, i); p != nil && p.Tag == der.Context1 {
		for _, ext := range r.children(*p, 16) {
			fields := r.children(r.expect(&ext, der.Sequence, "an extension"), 3)
			for _, f := range fields {
				if f.Tag == der.Boolean && b[f.Start] == 0xff {
					s.critical = true
				}
			}
		}
		i++
	}
	if i != len(parts) {
		r.bad("the statement holds parts that are not in the order its standard sets out.")
	}
	return s
}

func ptr(e der.Element) *der.Element { return &e }

// certificate is what is needed from one (RFC 5280 section 4.1).
type certificate struct {
	whole         []byte
	notBefore     int64
	notAfter      int64
	spki          []byte
	keyOID        string
	keyParameters *der.Element
	keyBits       der.Element
	curveOID      string
}

func (r *reader) certificate(e der.Element) certificate {
	seq := r.expect(&e, der.Sequence, "a certificate")
	whole := r.whole(seq)
	tbs := r.expect(der.At(r.children(seq, 3), 0), der.Sequence, "the body of a certificate")
	parts := r.children(tbs, 12)
	// The version, in [0], is absent only in the oldest kind of certificate.
	i := 0
	if p := der.At(parts, 0); p != nil && p.Tag == der.Context0 {
		i = 1
	}
	r.expect(der.At(parts, i), der.Integer, "the serial number of a certificate")
	r.expect(der.At(parts, i+1), der.Sequence, "the signing method of a certificate")
	r.expect(der.At(parts, i+2), der.Sequence, "the issuer of a certificate")
	validity := r.children(r.expect(der.At(parts, i+3), der.Sequence, "the dates of a certificate"), 2)
	if len(validity) != 2 {
		r.bad("a certificate does not hold two dates.")
	}
	r.expect(der.At(parts, i+4), der.Sequence, "the subject of a certificate")
	keyInfo := r.expect(der.At(parts, i+5), der.Sequence, "the public key of a certificate")
	keyParts := r.children(keyInfo, 2)
	keyOID, params := r.algorithm(der.At(keyParts, 0), "the kind of public key")
	c := certificate{
		whole:         whole,
		notBefore:     r.time(validity[0]),
		notAfter:      r.time(validity[1]),
		spki:          r.whole(keyInfo),
		keyOID:        keyOID,
		keyParameters: params,
		keyBits:       r.expect(der.At(keyParts, 1), der.BitString, "the public key of a certificate"),
	}
	if params != nil && params.Tag == der.OID {
		c.curveOID = r.hex(*params)
	}
	return c
}

// namedCertificate is the signing-certificate attribute's choice: the
// fingerprint method and the fingerprint of the certificate.
type namedCertificate struct {
	hash  string
	value []byte
}

func (r *reader) signingCertificate(value der.Element, v2 bool) namedCertificate {
	outer := r.children(r.expect(&value, der.Sequence, "the signing certificate attribute"), 2)
	certs := r.children(r.expect(der.At(outer, 0), der.Sequence, "the signing certificate attribute"), 8)
	first := r.children(r.expect(der.At(certs, 0), der.Sequence, "the signing certificate attribute"), 3)
	at := 0
	h := hashSHA1
	if v2 {
		h = hashSHA256
		if p := der.At(first, 0); p != nil && p.Tag == der.Sequence {
			oid, _ := r.algorithm(p, "the signing certificate attribute")
			named, ok := hashes[oid]
			if !ok {
				r.fail(invalid("A time-stamp names its certificate with a fingerprint method that is not accepted."))
			}
			h = named
			at = 1
		}
	}
	return namedCertificate{hash: h, value: r.content(r.expect(der.At(first, at), der.OctetString, "the signing certificate attribute"))}
}

// checkKeyEncoding holds a certificate's public key to the one way its
// standard writes it: RSA as RFC 3279 section 2.3.1, ECDSA as RFC 5480
// section 2.2 (uncompressed), Ed25519 as RFC 8410 section 4; the bit
// string with no unused bits. An RSA key is 2,048 to 8,192 bits with an odd
// public number from 3 to 2^32-1.
func (r *reader) checkKeyEncoding(c certificate, method string, size int) (inner []byte) {
	bitsContent := r.content(c.keyBits)
	if len(bitsContent) < 1 || bitsContent[0] != 0 {
		r.bad(keyEncodingWrong)
	}
	inner = bitsContent[1:]
	switch method {
	case MethodECDSA:
		if len(inner) != 1+2*size || inner[0] != 0x04 {
			r.bad(keyEncodingWrong)
		}
		return inner
	case MethodEd25519:
		if c.keyParameters != nil || len(inner) != 32 {
			r.bad(keyEncodingWrong)
		}
		if jwk.WeakEd25519(inner) {
			r.fail(invalid(weakEd25519))
		}
		return inner
	}
	if c.keyParameters == nil || c.keyParameters.Tag != der.Null {
		r.bad(keyEncodingWrong)
	}
	n, e, ok := rsaParts(inner)
	if !ok {
		r.bad(keyEncodingWrong)
	}
	modulus := n
	if len(modulus) > 0 && modulus[0] == 0 {
		modulus = modulus[1:]
	}
	length := 0
	if len(modulus) > 0 {
		length = (len(modulus)-1)*8 + bits.Len8(modulus[0])
	}
	exponent := e
	if len(exponent) > 0 && exponent[0] == 0 {
		exponent = exponent[1:]
	}
	odd := len(exponent) > 0 && exponent[len(exponent)-1]&1 == 1
	if length < 2048 || length > 8192 || len(exponent) == 0 || len(exponent) > 4 || !odd || (len(exponent) == 1 && exponent[0] < 3) {
		r.fail(invalid(rsaKeyNotAccepted))
	}
	return inner
}

// rsaParts reads RSAPublicKey ::= SEQUENCE { n INTEGER, e INTEGER }
// strictly: both positive, nothing after them.
func rsaParts(b []byte) (n, e []byte, ok bool) {
	key, err := der.Read(b, 0, len(b))
	if err != nil || key.Tag != der.Sequence || key.End != len(b) || der.Validate(b, key) != nil {
		return nil, nil, false
	}
	parts, err := der.Children(b, key, 3)
	if err != nil || len(parts) != 2 || parts[0].Tag != der.Integer || parts[1].Tag != der.Integer ||
		b[parts[0].Start]&0x80 != 0 || b[parts[1].Start]&0x80 != 0 {
		return nil, nil, false
	}
	return der.Content(b, parts[0]), der.Content(b, parts[1]), true
}

// verify checks the service's signature with the certificate's key:
// "valid", "invalid", or "unavailable" where the method is treated as not
// built in. The fingerprint method is the one the signer names; a signing
// method that names another fails.
func (r *reader) verify(c certificate, signatureOID, digestName string, signature, signed []byte, without []string) string {
	switch c.keyOID {
	case oidRSAEncryption:
		if signatureOID != oidRSAEncryption && rsaWith[signatureOID] != digestName {
			return "invalid"
		}
		inner := r.checkKeyEncoding(c, MethodRSA, 0)
		if slices.Contains(without, MethodRSA) {
			return StateUnavailable
		}
		n, e, _ := rsaParts(inner)
		if verifyRSA(n, e, digestName, digest(digestName, signed), signature) {
			return StateValid
		}
		return "invalid"
	case oidECPublicKey:
		var curve elliptic.Curve
		size := 0
		switch c.curveOID {
		case oidP256:
			curve, size = elliptic.P256(), 32
		case oidP384:
			curve, size = elliptic.P384(), 48
		default:
			r.fail(invalid(kindNotAccepted))
		}
		if ecdsaWith[signatureOID] != digestName {
			return "invalid"
		}
		inner := r.checkKeyEncoding(c, MethodECDSA, size)
		if slices.Contains(without, MethodECDSA) {
			return StateUnavailable
		}
		pub, err := ecdsa.ParseUncompressedPublicKey(curve, inner)
		if err != nil {
			return "invalid"
		}
		raw, err := der.ECDSAToRaw(signature, size)
		if err != nil {
			return "invalid"
		}
		rr := new(big.Int).SetBytes(raw[:size])
		ss := new(big.Int).SetBytes(raw[size:])
		if ecdsa.Verify(pub, digest(digestName, signed), rr, ss) {
			return StateValid
		}
		return "invalid"
	case oidEd25519:
		if signatureOID != oidEd25519 {
			return "invalid"
		}
		inner := r.checkKeyEncoding(c, MethodEd25519, 0)
		if slices.Contains(without, MethodEd25519) {
			return StateUnavailable
		}
		if len(signature) != ed25519.SignatureSize || jwk.WeakEd25519(signature[:32]) {
			return "invalid"
		}
		if ed25519.Verify(ed25519.PublicKey(inner), signed, signature) {
			return StateValid
		}
		return "invalid"
	}
	r.fail(invalid(kindNotAccepted))
	return ""
}

// verifyRSA is RSASSA-PKCS1-v1_5 verification (RFC 8017 section 8.2.2)
// done here, so that every public number the format accepts (up to
// 2^32-1) is checked the same way; crypto/rsa refuses some of them.
func verifyRSA(nBytes, eBytes []byte, digestName string, hashed, sig []byte) bool {
	n := new(big.Int).SetBytes(nBytes)
	e := new(big.Int).SetBytes(eBytes)
	k := (n.BitLen() + 7) / 8
	if len(sig) != k {
		return false
	}
	s := new(big.Int).SetBytes(sig)
	if s.Cmp(n) >= 0 {
		return false
	}
	m := new(big.Int).Exp(s, e, n)
	em := m.FillBytes(make([]byte, k))
	prefix := digestInfoPrefix[digestName]
	tLen := len(prefix) + len(hashed)
	if k < tLen+11 {
		return false
	}
	want := make([]byte, 0, k)
	want = append(want, 0x00, 0x01)
	for range k - tLen - 3 {
		want = append(want, 0xff)
	}
	want = append(want, 0x00)
	want = append(want, prefix...)
	want = append(want, hashed...)
	return bytes.Equal(em, want)
}

// digestInfoPrefix is the DER of DigestInfo before the hash (RFC 8017
// section 9.2, note 1).
var digestInfoPrefix = map[string][]byte{
	hashSHA256: {0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20},
	hashSHA384: {0x30, 0x41, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x02, 0x05, 0x00, 0x04, 0x30},
	hashSHA512: {0x30, 0x51, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x03, 0x05, 0x00, 0x04, 0x40},
}

// Check checks one time-stamp token against the 32 bytes that must have
// been stamped (a seal's or a cancellation's fingerprint, decoded), as the
// format's checker does (section 21.2, rules 1 to 6). A token that does
// not pass is refused with "stamp-bad-data", "stamp-wrong-data" or
// "stamp-invalid"; one that passes has state "valid" when the certificate
// that signed is among opts.Trusted, "untrusted" otherwise, and
// "unavailable" when its method is in opts.Without.
func Check(token, stamped []byte, opts Options) (res Result, err error) {
	if len(token) == 0 || len(token) > MaxTokenBytes {
		return Result{}, der.Bad("it is empty, or larger than 12,288 bytes.")
	}
	if stamped == nil {
		return Result{}, der.Bad("there is no fingerprint to compare it with.")
	}
	defer func() {
		if p := recover(); p != nil {
			ref, ok := p.(refusal)
			if !ok {
				panic(p)
			}
			res, err = Result{}, ref.err
		}
	}()
	t := parseToken(token)
	return t.check(stamped, opts), nil
}

// token is a TimeStampToken read: its parts, before any check of what it
// stamps.
type token struct {
	r            *reader
	statement    statement
	statementRaw []byte
	certificates []certificate
	digestName   string
	attributes   der.Element
	signatureOID string
	signature    []byte
}

func parseToken(b []byte) *token {
	r := &reader{b: b}
	wrapper := r.expect(ptr(r.read(0, len(b))), der.Sequence, "the wrapper")
	if wrapper.End != len(b) {
		r.bad("it has bytes left over.")
	}
	r.must(der.Validate(b, wrapper))
	outer := r.children(wrapper, 2)
	if len(outer) != 2 || r.hex(r.expect(der.At(outer, 0), der.OID, "the kind of content")) != oidSignedData {
		r.bad("it is not signed data.")
	}
	inner := r.children(r.expect(der.At(outer, 1), der.Context0, "the signed data"), 1)
	parts := r.children(r.expect(der.At(inner, 0), der.Sequence, "the signed data"), 6)
	if r.hex(r.expect(der.At(parts, 0), der.Integer, "the version")) != "03" {
		r.bad("the signed data is of a version other than 3.")
	}
	for _, m := range r.children(r.expect(der.At(parts, 1), der.Set, "the list of fingerprint methods"), 8) {
		r.algorithm(&m, "a fingerprint method")
	}
	enclosed := r.children(r.expect(der.At(parts, 2), der.Sequence, "the enclosed content"), 2)
	if len(enclosed) != 2 || r.hex(r.expect(der.At(enclosed, 0), der.OID, "the kind of enclosed content")) != oidTSTInfo {
		r.bad("what it encloses is not a time-stamp statement.")
	}
	holder := r.children(r.expect(der.At(enclosed, 1), der.Context0, "the statement"), 1)
	statementRaw := r.content(r.expect(der.At(holder, 0), der.OctetString, "the statement"))
	t := &token{r: r, statementRaw: statementRaw, statement: readStatement(statementRaw)}

	// The certificates, a list of withdrawn certificates (not used), and the
	// one signer. Nothing else.
	next := 3
	if p := der.At(parts, next); p != nil && p.Tag == der.Context0 {
		for _, c := range r.children(*p, 8) {
			// Other kinds of certificate may sit here; only the ordinary kind is read.
			if c.Tag == der.Sequence {
				t.certificates = append(t.certificates, r.certificate(c))
			}
		}
		next++
	}
	if p := der.At(parts, next); p != nil && p.Tag == der.Context1 {
		next++
	}
	if next != len(parts)-1 {
		r.bad("the signed data holds parts that are not in the order its standard sets out.")
	}
	signers := r.children(r.expect(der.At(parts, next), der.Set, "the signer"), 1)
	signer := r.children(r.expect(der.At(signers, 0), der.Sequence, "the signer"), 7)
	// Version 1 names the certificate by its issuer and number; version 3 by its key.
	version := r.hex(r.expect(der.At(signer, 0), der.Integer, "the version of the signer"))
	sid := der.At(signer, 1)
	if sid == nil || !((version == "01" && sid.Tag == der.Sequence) || (version == "03" && sid.Tag == 0x80)) {
		r.bad("the signer is not named as its standard sets out.")
	}
	dOID, _ := r.algorithm(der.At(signer, 2), "the signer's fingerprint method")
	t.digestName = hashes[dOID]
	t.attributes = r.expect(der.At(signer, 3), der.Context0, "the signed attributes")
	t.signatureOID, _ = r.algorithm(der.At(signer, 4), "the signing method")
	t.signature = r.content(r.expect(der.At(signer, 5), der.OctetString, "the signature"))
	if len(signer) > 7 || (len(signer) == 7 && signer[6].Tag != der.Context1) {
		r.bad("the signer holds parts that are not in the order its standard sets out.")
	}
	return t
}

func (t *token) check(stamped []byte, opts Options) Result {
	r, s := t.r, t.statement
	// What was stamped must be the fingerprint the checker holds.
	if s.hash != oidSHA256 || !bytes.Equal(s.stamped, stamped) {
		r.fail(problem.New(CodeWrongData, "%s", wrongData))
	}
	if s.critical {
		r.fail(invalid(criticalNotKnown))
	}
	if s.accuracySeconds > MaxAccuracySeconds {
		r.fail(invalid(accuracyTooLoose))
	}
	named := t.attributesNamed()
	// The one certificate the signed attributes name. A copy with the same
	// key and other contents has another fingerprint, and is not it.
	var cert *certificate
	for i := range t.certificates {
		if bytes.Equal(digest(named.hash, t.certificates[i].whole), named.value) {
			cert = &t.certificates[i]
			break
		}
	}
	if cert == nil {
		if len(t.certificates) > 0 {
			r.fail(invalid(certificateNotCarried))
		}
		r.fail(invalid(noCertificate))
	}
	// The signature covers the attributes written as a set (RFC 5652
	// section 5.4): the same bytes with the tag 0x31.
	signed := slices.Clone(r.whole(t.attributes))
	signed[0] = der.Set
	state := r.verify(*cert, t.signatureOID, t.digestName, t.signature, signed, opts.Without)
	if state == StateUnavailable {
		return Result{State: StateUnavailable}
	}
	if state != StateValid {
		r.fail(invalid(signatureDoesNotFit))
	}
	if s.time < cert.notBefore || s.time > cert.notAfter {
		r.fail(invalid(certDatesDoNotHold))
	}
	authority := fingerprint(cert.whole)
	res := Result{State: StateUntrusted, When: formatTime(s.time), Time: s.time, Authority: authority}
	if slices.Contains(opts.Trusted, authority) {
		res.State = StateValid
	}
	return res
}

// attributesNamed checks the signed attributes: they name the statement
// (its kind and its fingerprint, RFC 5652 section 5.4) and the certificate
// that signed (RFC 3161 section 2.4.2), which it returns.
func (t *token) attributesNamed() *namedCertificate {
	r := t.r
	// The signed attributes must name the statement (its kind and its
	// fingerprint, RFC 5652 section 5.4) and the certificate that signed
	// (RFC 3161 section 2.4.2).
	if t.digestName == "" {
		r.fail(invalid("A time-stamp uses a fingerprint method that is not accepted."))
	}
	kindNamed, digestNamed := false, false
	var named *namedCertificate
	for _, attr := range r.children(t.attributes, 16) {
		pair := r.children(r.expect(&attr, der.Sequence, "an attribute"), 2)
		name := r.hex(r.expect(der.At(pair, 0), der.OID, "the name of an attribute"))
		values := r.children(r.expect(der.At(pair, 1), der.Set, "the value of an attribute"), 4)
		switch name {
		case oidContentType:
			if kindNamed || len(values) != 1 || values[0].Tag != der.OID || r.hex(values[0]) != oidTSTInfo {
				r.fail(invalid("A time-stamp's signature does not cover a time-stamp statement."))
			}
			kindNamed = true
		case oidMessageDigest:
			if digestNamed || len(values) != 1 || values[0].Tag != der.OctetString || !bytes.Equal(r.content(values[0]), digest(t.digestName, t.statementRaw)) {
				r.fail(invalid(statementNotCovered))
			}
			digestNamed = true
		case oidSigningCertV2, oidSigningCert:
			if len(values) != 1 {
				r.fail(invalid("A time-stamp does not say, in one way, which certificate signed it."))
			}
			// Where both forms are present, the newer one is used.
			if named == nil || name == oidSigningCertV2 {
				n := r.signingCertificate(values[0], name == oidSigningCertV2)
				named = &n
			}
		}
	}
	if !kindNamed || !digestNamed {
		r.fail(invalid(statementNotCovered))
	}
	if named == nil {
		r.fail(invalid("A time-stamp does not say which certificate signed it."))
	}
	return named
}

// fingerprint is SHA-256 in base64url, as the format names a certificate.
func fingerprint(b []byte) string {
	h := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(h[:])
}

// CertificateFingerprint is the fingerprint a person checking names a
// service by: SHA-256 of the DER of its signing certificate, in base64url.
func CertificateFingerprint(certDER []byte) string { return fingerprint(certDER) }

// formatTime writes milliseconds as the format's time, rounded down to the second.
func formatTime(ms int64) string {
	return time.UnixMilli(ms).UTC().Truncate(time.Second).Format("2006-01-02T15:04:05Z")
}
