package stamp

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"errors"
	"fmt"

	"github.com/seed-6e06167c/mcp-executor/receipts/der"
)

// NonceSize is the number of random bytes in a request's nonce.
const NonceSize = 16

// Request is one TimeStampReq (RFC 3161 section 2.4.1) over a fingerprint,
// as the format asks (section 21.2): SHA-256, the 32 bytes of the
// fingerprint, a fresh nonce, and the service's certificate asked for.
type Request struct {
	// Stamped is the 32 bytes that are stamped: the decoded fingerprint of
	// the seal (or cancellation).
	Stamped []byte
	// Nonce is a positive whole number, big-endian, its top bit clear.
	Nonce []byte
	// DER is the request as sent.
	DER []byte
}

// NewRequest builds the request for the 32 bytes of a fingerprint, with a
// fresh random nonce.
func NewRequest(stamped []byte) (*Request, error) {
	nonce := make([]byte, NonceSize)
	rand.Read(nonce) // never fails (crypto/rand, Go 1.24+)
	return NewRequestWithNonce(stamped, nonce)
}

// NewRequestWithNonce is NewRequest with a given nonce (tests, and a
// caller that keeps its own); the nonce's top bit is cleared and leading
// zero bytes taken off, so that it is written as a positive whole number.
func NewRequestWithNonce(stamped, nonce []byte) (*Request, error) {
	if len(stamped) != sha256.Size {
		return nil, fmt.Errorf("a time-stamp request stamps a fingerprint of 32 bytes, not %d", len(stamped))
	}
	n := bytes.Clone(nonce)
	if len(n) > 0 {
		n[0] &= 0x7f
	}
	for len(n) > 1 && n[0] == 0 && n[1]&0x80 == 0 {
		n = n[1:]
	}
	if len(n) == 0 {
		n = []byte{0}
	}
	sha256Alg := seq(tlv(der.OID, unhex(oidSHA256)), tlv(der.Null, nil))
	imprint := seq(sha256Alg, tlv(der.OctetString, stamped))
	body := seq(
		tlv(der.Integer, []byte{1}), // version v1
		imprint,
		tlv(der.Integer, n),            // nonce
		tlv(der.Boolean, []byte{0xff}), // certReq: the certificate, so the token can be checked alone
	)
	return &Request{Stamped: bytes.Clone(stamped), Nonce: n, DER: body}, nil
}

func unhex(s string) []byte {
	out := make([]byte, len(s)/2)
	for i := range out {
		out[i] = hexval(s[2*i])<<4 | hexval(s[2*i+1])
	}
	return out
}

func hexval(c byte) byte {
	if c >= 'a' {
		return c - 'a' + 10
	}
	return c - '0'
}

// tlv writes one DER element; lengths of any size.
func tlv(tag byte, content []byte) []byte {
	out := []byte{tag}
	n := len(content)
	switch {
	case n < 128:
		out = append(out, byte(n))
	case n < 256:
		out = append(out, 0x81, byte(n))
	case n < 65536:
		out = append(out, 0x82, byte(n>>8), byte(n))
	default:
		out = append(out, 0x83, byte(n>>16), byte(n>>8), byte(n))
	}
	return append(out, content...)
}

func seq(parts ...[]byte) []byte { return tlv(der.Sequence, bytes.Join(parts, nil)) }

// PKI statuses a service answers with (RFC 3161 section 2.4.2).
const (
	statusGranted         = 0
	statusGrantedWithMods = 1
)

// ErrRefusedByService is wrapped by ReadResponse when the service says no.
var ErrRefusedByService = errors.New("the time-stamp service refused the request")

// ErrOtherRequest is wrapped by ReadResponse when the token answers
// another request: another nonce, or another fingerprint.
var ErrOtherRequest = errors.New("the time-stamp answers another request")

// ReadResponse reads a service's TimeStampResp strictly (one DER element
// and nothing after it), and returns the token once its status is granted,
// it carries the request's nonce, and it stamps the request's fingerprint
// with SHA-256. The token is then checked as the format's checker checks
// it (Check), with opts; its Result is returned beside it.
func ReadResponse(resp []byte, req *Request, opts Options) (token []byte, res Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			ref, ok := p.(refusal)
			if !ok {
				panic(p)
			}
			token, res, err = nil, Result{}, ref.err
		}
	}()
	r := &reader{b: resp}
	outer := r.expect(ptr(r.read(0, len(resp))), der.Sequence, "the answer")
	if outer.End != len(resp) {
		r.bad("the answer has bytes left over.")
	}
	r.must(der.Validate(resp, outer))
	parts := r.children(outer, 2)
	info := r.children(r.expect(der.At(parts, 0), der.Sequence, "the status of the answer"), 3)
	status := r.content(r.expect(der.At(info, 0), der.Integer, "the status of the answer"))
	if len(status) != 1 || (status[0] != statusGranted && status[0] != statusGrantedWithMods) {
		why := ""
		if len(status) == 1 {
			why = fmt.Sprintf(" (status %d%s)", status[0], failureInfo(r, info))
		}
		return nil, Result{}, fmt.Errorf("%w%s", ErrRefusedByService, why)
	}
	tok := der.At(parts, 1)
	if tok == nil {
		return nil, Result{}, fmt.Errorf("%w: it was granted, but holds no time-stamp", ErrRefusedByService)
	}
	token = bytes.Clone(r.whole(r.expect(tok, der.Sequence, "the time-stamp")))
	if len(token) > MaxTokenBytes {
		r.bad("it is empty, or larger than 12,288 bytes.")
	}
	t := parseToken(token)
	if t.statement.hash != oidSHA256 || !bytes.Equal(t.statement.stamped, req.Stamped) {
		return nil, Result{}, fmt.Errorf("%w: it stamps another fingerprint", ErrOtherRequest)
	}
	if !bytes.Equal(t.statement.nonce, req.Nonce) {
		return nil, Result{}, fmt.Errorf("%w: its nonce is not the request's", ErrOtherRequest)
	}
	res = t.check(req.Stamped, opts)
	return token, res, nil
}

// failureInfo names the failure bits a refusal carries, for the error.
func failureInfo(r *reader, info []der.Element) string {
	names := []string{"badAlg", "", "badRequest", "", "", "badDataFormat", "", "", "", "", "", "", "", "", "timeNotAvailable", "unacceptedPolicy", "unacceptedExtension", "addInfoNotAvailable", "", "", "", "", "", "", "", "systemFailure"}
	for _, e := range info[1:] {
		if e.Tag != der.BitString {
			continue
		}
		c := r.content(e)
		var out []string
		for i := 0; i < (len(c)-1)*8; i++ {
			if c[1+i/8]&(0x80>>(i%8)) != 0 && i < len(names) && names[i] != "" {
				out = append(out, names[i])
			}
		}
		if len(out) > 0 {
			return fmt.Sprintf(", %v", out)
		}
	}
	return ""
}

// SigningCertificate returns the certificate that signed a token that has
// passed Check: the one its signed attributes name.
func SigningCertificate(token []byte) (cert *x509.Certificate, err error) {
	defer func() {
		if p := recover(); p != nil {
			ref, ok := p.(refusal)
			if !ok {
				panic(p)
			}
			cert, err = nil, ref.err
		}
	}()
	t := parseToken(token)
	named := t.named()
	for _, c := range t.certificates {
		if bytes.Equal(digest(named.hash, c.whole), named.value) {
			return x509.ParseCertificate(c.whole)
		}
	}
	return nil, invalid(noCertificate)
}

// Certificates returns every ordinary certificate a token carries, in its
// order (for the chain a writer holds it to).
func Certificates(token []byte) (certs []*x509.Certificate, err error) {
	defer func() {
		if p := recover(); p != nil {
			ref, ok := p.(refusal)
			if !ok {
				panic(p)
			}
			certs, err = nil, ref.err
		}
	}()
	t := parseToken(token)
	for _, c := range t.certificates {
		x, err := x509.ParseCertificate(c.whole)
		if err != nil {
			return nil, fmt.Errorf("a certificate in the time-stamp: %w", err)
		}
		certs = append(certs, x)
	}
	return certs, nil
}

// named is the signing-certificate attribute's choice, read without the
// rest of the check.
func (t *token) named() namedCertificate {
	r := t.r
	var named *namedCertificate
	for _, attr := range r.children(t.attributes, 16) {
		pair := r.children(r.expect(&attr, der.Sequence, "an attribute"), 2)
		name := r.hex(r.expect(der.At(pair, 0), der.OID, "the name of an attribute"))
		values := r.children(r.expect(der.At(pair, 1), der.Set, "the value of an attribute"), 4)
		if (name == oidSigningCertV2 || name == oidSigningCert) && len(values) == 1 && (named == nil || name == oidSigningCertV2) {
			n := r.signingCertificate(values[0], name == oidSigningCertV2)
			named = &n
		}
	}
	if named == nil {
		r.fail(invalid("A time-stamp does not say which certificate signed it."))
	}
	return *named
}
