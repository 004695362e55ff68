package stamp

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"
)

// DefaultTimeout is how long a Client waits for one service by default.
const DefaultTimeout = 10 * time.Second

// MaxResponseBytes is the most of a service's answer that is read.
const MaxResponseBytes = 64 << 10

// MaxStamps is the most time-stamps one seal may carry (format, §21.2).
const MaxStamps = 4

// Service is one time-stamp service as a writer knows it.
type Service struct {
	// URL is where requests are posted (Content-Type
	// application/timestamp-query).
	URL string
	// Trusted are the fingerprints of the certificates the service signs
	// with (see CertificateFingerprint). A token signed by another is
	// refused; with none, any sound token is taken and reported by its
	// certificate's fingerprint.
	Trusted []string
	// Chain, when set, is the service's certificates (the signing one first,
	// its root last): the signing certificate must chain to the root, for
	// time-stamping (RFC 3161 section 2.3), at the stated time. It is the
	// writer's own guard; the format's checker reads no chain.
	Chain []*x509.Certificate
}

// Client asks services for time-stamps over HTTP.
type Client struct {
	// HTTP is the client used; nil means one of our own with no proxy
	// surprises beyond the environment's.
	HTTP *http.Client
	// Timeout bounds each service's answer; 0 means DefaultTimeout.
	Timeout time.Duration
}

// Stamp is a token a service gave, with what it states.
type Stamp struct {
	Service string // the service's URL
	Token   []byte
	Result  Result
}

// Ask asks one service to stamp the 32 bytes of a fingerprint, and returns
// the token once it passes ReadResponse and the service's own rules. It
// never waits past the client's timeout (or ctx).
func (c *Client) Ask(ctx context.Context, s Service, stamped []byte) (*Stamp, error) {
	req, err := NewRequest(stamped)
	if err != nil {
		return nil, err
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, bytes.NewReader(req.DER))
	if err != nil {
		return nil, fmt.Errorf("asking %s for a time-stamp: %w", s.URL, err)
	}
	hreq.Header.Set("Content-Type", "application/timestamp-query")
	hreq.Header.Set("Accept", "application/timestamp-reply")
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(hreq)
	if err != nil {
		return nil, fmt.Errorf("asking %s for a time-stamp: %w", s.URL, err)
	}
	defer func() { _ = resp.Body.Close() }() // the body is read whole below, or the answer refused; nothing is left to tell
	if resp.StatusCode/100 != 2 {            // Sigstore's timestamp-server answers 201
		return nil, fmt.Errorf("asking %s for a time-stamp: %w: HTTP %d", s.URL, ErrRefusedByService, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the time-stamp from %s: %w", s.URL, err)
	}
	if len(body) > MaxResponseBytes {
		return nil, fmt.Errorf("reading the time-stamp from %s: the answer is longer than %d bytes", s.URL, MaxResponseBytes)
	}
	return accept(s, req, body)
}

// accept reads a service's answer to req and holds it to the service's rules.
func accept(s Service, req *Request, body []byte) (*Stamp, error) {
	token, res, err := ReadResponse(body, req, Options{Trusted: s.Trusted})
	if err != nil {
		return nil, fmt.Errorf("the time-stamp from %s: %w", s.URL, err)
	}
	if len(s.Trusted) > 0 && res.State != StateValid {
		return nil, fmt.Errorf("the time-stamp from %s is signed by certificate %s, not one the service is known by", s.URL, res.Authority)
	}
	if len(s.Chain) > 0 {
		if err := holdToChain(token, s.Chain, res.At()); err != nil {
			return nil, fmt.Errorf("the time-stamp from %s: %w", s.URL, err)
		}
	}
	return &Stamp{Service: s.URL, Token: token, Result: res}, nil
}

// holdToChain confirms that the token's signing certificate chains to the
// last certificate of chain, for time-stamping, at the stated time.
func holdToChain(token []byte, chain []*x509.Certificate, at time.Time) error {
	cert, err := SigningCertificate(token)
	if err != nil {
		return err
	}
	roots := x509.NewCertPool()
	roots.AddCert(chain[len(chain)-1])
	inter := x509.NewCertPool()
	for _, c := range chain[:len(chain)-1] {
		inter.AddCert(c)
	}
	if more, err := Certificates(token); err == nil {
		for _, c := range more {
			inter.AddCert(c)
		}
	}
	_, err = cert.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, CurrentTime: at, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageTimeStamping}})
	if err != nil {
		return fmt.Errorf("its certificate does not chain to the service's root for time-stamping: %w", err)
	}
	return nil
}

// AskAll asks every service at once (at most MaxStamps), each bounded by
// the client's timeout, and returns the stamps it got, in the services'
// order, with one error per service that gave none. A service that is
// down, slow or wrong costs only its own stamp.
func (c *Client) AskAll(ctx context.Context, services []Service, stamped []byte) ([]Stamp, []error) {
	if len(services) > MaxStamps {
		services = services[:MaxStamps]
	}
	got := make([]*Stamp, len(services))
	errs := make([]error, len(services))
	var wg sync.WaitGroup
	for i, s := range services {
		wg.Go(func() { got[i], errs[i] = c.Ask(ctx, s, stamped) })
	}
	wg.Wait()
	var out []Stamp
	seen := map[string]bool{}
	for _, g := range got {
		// The format allows no time-stamp twice on one seal.
		if g != nil && !seen[string(g.Token)] {
			seen[string(g.Token)] = true
			out = append(out, *g)
		}
	}
	return out, slices.DeleteFunc(errs, func(e error) bool { return e == nil })
}

// ParseChain reads PEM certificates (a service's chain: its signing
// certificate first) and returns them with the signing certificate's
// fingerprint, the one a `--stamp-service` names.
func ParseChain(pemText []byte) ([]*x509.Certificate, string, error) {
	var certs []*x509.Certificate
	for rest := pemText; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, "", fmt.Errorf("reading a service's certificates: %w", err)
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, "", errors.New("reading a service's certificates: no PEM certificate found")
	}
	return certs, CertificateFingerprint(certs[0].Raw), nil
}
