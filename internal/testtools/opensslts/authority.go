package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"mime"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// maxQuery bounds a request's body: a TimeStampReq is a hash, a policy and a nonce, some 100 bytes.
const maxQuery = 64 << 10

// replyTimeout bounds one `openssl ts -reply`.
const replyTimeout = 20 * time.Second

// authority is one TSA: its folder (keys, certificates, openssl's configuration and serial file) and
// the openssl command that signs.
type authority struct {
	dir     string
	openssl string
	mu      sync.Mutex // one reply at a time: openssl reads and writes the serial file
}

// newAuthority makes dir's certificates and configuration unless they are there, so that a restart
// keeps its chain.
func newAuthority(dir, openssl string) (*authority, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(abs, "work"), 0o700); err != nil {
		return nil, err
	}
	a := &authority{dir: abs, openssl: openssl}
	if _, err := os.Stat(a.chainFile()); err == nil {
		return a, nil
	}
	if err := a.makeCertificates(); err != nil {
		return nil, fmt.Errorf("making the TSA's certificates in %s: %w", abs, err)
	}
	return a, nil
}

func (a *authority) path(name string) string { return filepath.Join(a.dir, name) }
func (a *authority) chainFile() string       { return a.path("chain.pem") }

// tsaExtensions are the TSA certificate's: RFC 3161 section 2.3 wants the timeStamping key purpose,
// alone and critical.
const tsaExtensions = `basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, nonRepudiation
extendedKeyUsage = critical, timeStamping
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
`

// config is what `openssl ts -reply` reads: the signer, the chain it puts in each reply, the digests
// it takes, the policy it names.
const config = `[ tsa ]
default_tsa = tsa_config

[ tsa_config ]
dir = %s
serial = $dir/serial
crypto_device = builtin
signer_cert = $dir/tsa.crt
certs = $dir/chain.pem
signer_key = $dir/tsa.key
signer_digest = sha256
default_policy = 2.999.3161.1
digests = sha256, sha384, sha512
accuracy = secs:1
ordering = no
tsa_name = yes
ess_cert_id_chain = no
ess_cert_id_alg = sha256
`

func (a *authority) makeCertificates() error {
	steps := [][]string{
		{"req", "-x509", "-newkey", "rsa:3072", "-nodes", "-days", "3650", "-subj", "/O=mcp-executor tests/CN=OpenSSL test TSA root",
			"-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
			"-keyout", a.path("ca.key"), "-out", a.path("ca.crt")},
		{"req", "-newkey", "rsa:2048", "-nodes", "-subj", "/O=mcp-executor tests/CN=OpenSSL test TSA",
			"-keyout", a.path("tsa.key"), "-out", a.path("tsa.csr")},
		{"x509", "-req", "-in", a.path("tsa.csr"), "-CA", a.path("ca.crt"), "-CAkey", a.path("ca.key"), "-CAcreateserial",
			"-days", "3650", "-extfile", a.path("tsa.ext"), "-out", a.path("tsa.crt")},
	}
	if err := os.WriteFile(a.path("tsa.ext"), []byte(tsaExtensions), 0o600); err != nil {
		return err
	}
	for _, args := range steps {
		if out, err := exec.Command(a.openssl, args...).CombinedOutput(); err != nil {
			return fmt.Errorf("openssl %s: %w: %s", args[0], err, bytes.TrimSpace(out))
		}
	}
	leaf, err := os.ReadFile(a.path("tsa.crt"))
	if err != nil {
		return err
	}
	root, err := os.ReadFile(a.path("ca.crt"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(a.path("serial"), []byte("01\n"), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(a.path("openssl-ts.cnf"), []byte(fmt.Sprintf(config, a.dir)), 0o600); err != nil {
		return err
	}
	// The chain last: its presence says the folder is complete.
	tmp := a.chainFile() + ".part"
	if err := os.WriteFile(tmp, append(leaf, root...), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, a.chainFile())
}

// errQuery is a request openssl could not answer: the client's fault.
var errQuery = errors.New("openssl could not answer the request")

// reply runs `openssl ts -reply` on one DER TimeStampReq.
func (a *authority) reply(ctx context.Context, query []byte) ([]byte, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	in, out := a.path("work/query.tsq"), a.path("work/reply.tsr")
	if err := os.Remove(out); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err := os.WriteFile(in, query, 0o600); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, replyTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, a.openssl, "ts", "-reply", "-config", a.path("openssl-ts.cnf"), "-queryfile", in, "-out", out)
	msg, err := cmd.CombinedOutput()
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("openssl ts -reply: %w", ctx.Err())
		}
		return nil, fmt.Errorf("%w: %s", errQuery, lastLines(msg))
	}
	return os.ReadFile(out)
}

// lastLines is openssl's complaint, short: its last lines, without the configuration notice.
func lastLines(b []byte) string {
	var keep []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l != "" && !strings.HasPrefix(l, "Using configuration from") {
			keep = append(keep, l)
		}
	}
	if len(keep) > 4 {
		keep = keep[len(keep)-4:]
	}
	return strings.Join(keep, "; ")
}

func (a *authority) handler(log *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /chain.pem", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pem-certificate-chain")
		http.ServeFile(w, r, a.chainFile())
	})
	mux.HandleFunc("POST /{$}", func(w http.ResponseWriter, r *http.Request) {
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/timestamp-query" {
			http.Error(w, "the body must be a DER TimeStampReq with Content-Type application/timestamp-query", http.StatusUnsupportedMediaType)
			return
		}
		query, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxQuery))
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			http.Error(w, fmt.Sprintf("a time-stamp request is at most %d bytes", maxQuery), http.StatusRequestEntityTooLarge)
			return
		} else if err != nil {
			http.Error(w, fmt.Sprintf("reading the request: %v", err), http.StatusBadRequest)
			return
		}
		resp, err := a.reply(r.Context(), query)
		switch {
		case errors.Is(err, errQuery):
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		case err != nil:
			log.Error("signing a time-stamp", slog.String("err", err.Error()))
			http.Error(w, "the time-stamp could not be made", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/timestamp-reply")
		w.Write(resp) //nolint:errcheck // a client that went away
	})
	return mux
}
