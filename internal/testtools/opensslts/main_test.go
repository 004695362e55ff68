package main

import (
	"bytes"
	"crypto/x509"
	"encoding/asn1"
	"encoding/pem"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// The tests run the real openssl (Debian's package), as the authority does.
func opensslPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("openssl")
	if err != nil {
		t.Fatalf("openssl is needed (install it with ./scripts/test.sh setup, in the repository's folder): %v", err)
	}
	return p
}

func newTestAuthority(t *testing.T) (*authority, *httptest.Server) {
	t.Helper()
	a, err := newAuthority(t.TempDir(), opensslPath(t))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.handler(slog.New(slog.DiscardHandler)))
	t.Cleanup(srv.Close)
	return a, srv
}

func openssl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(opensslPath(t), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("openssl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// query makes a TimeStampReq for data with openssl itself, asking for the signer's certificate.
func query(t *testing.T, dir, data string) string {
	t.Helper()
	in, q := filepath.Join(dir, "data"), filepath.Join(dir, "q.tsq")
	if err := os.WriteFile(in, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	openssl(t, "ts", "-query", "-data", in, "-sha256", "-cert", "-out", q)
	return q
}

func post(t *testing.T, url, contentType string, body []byte) (int, []byte) {
	t.Helper()
	resp, err := http.Post(url, contentType, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode == http.StatusOK && resp.Header.Get("Content-Type") != "application/timestamp-reply" {
		t.Errorf("Content-Type %q", resp.Header.Get("Content-Type"))
	}
	return resp.StatusCode, b
}

// stamp posts the query file and returns the reply's file.
func stamp(t *testing.T, url, dir, q string) string {
	t.Helper()
	body, err := os.ReadFile(q)
	if err != nil {
		t.Fatal(err)
	}
	code, reply := post(t, url, "application/timestamp-query", body)
	if code != http.StatusOK {
		t.Fatalf("POST: %d %s", code, reply)
	}
	r := filepath.Join(dir, filepath.Base(q)+".tsr")
	if err := os.WriteFile(r, reply, 0o600); err != nil {
		t.Fatal(err)
	}
	return r
}

var serialRE = regexp.MustCompile(`Serial number: (0x[0-9A-F]+)`)

// A reply verifies against the root of chain.pem for the very query sent, and names the TSA and its
// policy (an OID of the arc ITU-T and ISO keep for examples).
func TestReplyVerifies(t *testing.T) {
	a, srv := newTestAuthority(t)
	dir := t.TempDir()
	q := query(t, dir, "a seal's digest")
	r := stamp(t, srv.URL+"/", dir, q)
	if out := openssl(t, "ts", "-verify", "-in", r, "-queryfile", q, "-CAfile", a.path("ca.crt"), "-untrusted", a.chainFile()); !strings.Contains(out, "Verification: OK") {
		t.Fatalf("openssl ts -verify: %s", out)
	}
	text := openssl(t, "ts", "-reply", "-in", r, "-text")
	for _, want := range []string{"Status: Granted.", "Policy OID: 2.999.3161.1", "Hash Algorithm: sha256", "CN=OpenSSL test TSA"} {
		if !strings.Contains(text, want) {
			t.Errorf("the reply lacks %q:\n%s", want, text)
		}
	}
	// Another query's reply does not verify for this one.
	other := query(t, t.TempDir(), "something else")
	out, err := exec.Command(opensslPath(t), "ts", "-verify", "-in", r, "-queryfile", other, "-CAfile", a.path("ca.crt"), "-untrusted", a.chainFile()).CombinedOutput()
	if err == nil || strings.Contains(string(out), "Verification: OK") {
		t.Errorf("a reply verified for another query: %s", out)
	}
}

// The chain is the TSA's certificate, then the root; the TSA's names only time stamping, critical, and
// is no CA (read with Go's x509, apart from openssl).
func TestChain(t *testing.T) {
	a, srv := newTestAuthority(t)
	resp, err := http.Get(srv.URL + "/chain.pem")
	if err != nil {
		t.Fatal(err)
	}
	served, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	onDisk, err := os.ReadFile(a.chainFile())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(served, onDisk) {
		t.Errorf("GET /chain.pem is not chain.pem")
	}
	var certs []*x509.Certificate
	for rest := onDisk; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		certs = append(certs, c)
	}
	if len(certs) != 2 {
		t.Fatalf("%d certificates in the chain", len(certs))
	}
	leaf, root := certs[0], certs[1]
	if leaf.IsCA || !root.IsCA {
		t.Errorf("IsCA: leaf %v, root %v", leaf.IsCA, root.IsCA)
	}
	if len(leaf.ExtKeyUsage) != 1 || leaf.ExtKeyUsage[0] != x509.ExtKeyUsageTimeStamping {
		t.Errorf("the TSA's key purposes: %v", leaf.ExtKeyUsage)
	}
	ekuOID := asn1.ObjectIdentifier{2, 5, 29, 37}
	critical := false
	for _, e := range leaf.Extensions {
		if e.Id.Equal(ekuOID) {
			critical = e.Critical
		}
	}
	if !critical {
		t.Errorf("extendedKeyUsage is not critical")
	}
	pool := x509.NewCertPool()
	pool.AddCert(root)
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageTimeStamping}}); err != nil {
		t.Errorf("the TSA's certificate does not chain to the root: %v", err)
	}
	if _, ok := leaf.PublicKey.(interface{ Size() int }); !ok {
		t.Errorf("the TSA's key is %T, not RSA", leaf.PublicKey)
	}
	// A restart on the same folder keeps the chain.
	again, err := newAuthority(a.dir, a.openssl)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(again.chainFile()); !bytes.Equal(b, onDisk) {
		t.Errorf("a restart made new certificates")
	}
}

// Requests at once are answered one by one, each with a serial number of its own.
func TestConcurrentRequests(t *testing.T) {
	_, srv := newTestAuthority(t)
	const n = 6
	var wg sync.WaitGroup
	texts := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dir := t.TempDir()
			r := stamp(t, srv.URL+"/", dir, query(t, dir, strings.Repeat("x", i+1)))
			texts[i] = openssl(t, "ts", "-reply", "-in", r, "-text")
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, text := range texts {
		m := serialRE.FindStringSubmatch(text)
		if m == nil || !strings.Contains(text, "Status: Granted.") {
			t.Fatalf("not granted:\n%s", text)
		}
		if seen[m[1]] {
			t.Errorf("serial %s twice", m[1])
		}
		seen[m[1]] = true
	}
}

// What a hostile or careless client sends is turned away or rejected, and the authority still answers.
func TestHostileRequests(t *testing.T) {
	_, srv := newTestAuthority(t)
	dir := t.TempDir()
	good, err := os.ReadFile(query(t, dir, "fine"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path, contentType string
		body                    []byte
		code                    int
	}{
		{"no content type", "/", "", good, http.StatusUnsupportedMediaType},
		{"another content type", "/", "application/octet-stream", good, http.StatusUnsupportedMediaType},
		{"content type with case and parameters", "/", "Application/TimeStamp-Query; charset=binary", good, http.StatusOK},
		{"too large", "/", "application/timestamp-query", bytes.Repeat(good, maxQuery/len(good)+1), http.StatusRequestEntityTooLarge},
		{"another path", "/other", "application/timestamp-query", good, http.StatusNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			if code, body := post(t, srv.URL+c.path, c.contentType, c.body); code != c.code {
				t.Errorf("status %d, want %d (%s)", code, c.code, body)
			}
		})
	}
	resp, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /: %d", resp.StatusCode)
	}
	// Bytes that are no TimeStampReq (random, empty, a truncated request) get openssl's rejection,
	// never a granted time-stamp. (openssl reads a request followed by more bytes as the request: this
	// front hands it the bytes as they came, being only a way to reach openssl.)
	for name, body := range map[string][]byte{
		"garbage": []byte("\x30\x82\xff\xffnot DER"), "empty": nil, "truncated": good[:len(good)/2],
	} {
		t.Run(name, func(t *testing.T) {
			code, reply := post(t, srv.URL+"/", "application/timestamp-query", body)
			if code == http.StatusOK {
				r := filepath.Join(t.TempDir(), "r.tsr")
				if err := os.WriteFile(r, reply, 0o600); err != nil {
					t.Fatal(err)
				}
				if text := openssl(t, "ts", "-reply", "-in", r, "-text"); strings.Contains(text, "Granted") {
					t.Errorf("granted:\n%s", text)
				}
			} else if code != http.StatusBadRequest {
				t.Errorf("status %d (%s)", code, reply)
			}
		})
	}
	stamp(t, srv.URL+"/", dir, query(t, dir, "still answers"))
}
